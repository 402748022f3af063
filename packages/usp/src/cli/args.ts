import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UspError } from '@usp-ts/core';

/** A command-line mistake: reported with the command's usage line, exit code 2. */
export class UsageError extends UspError {
  declare readonly code: 'USP_USAGE';
  readonly usage: string;
  constructor(message: string, usage: string) {
    super('USP_USAGE', message);
    this.name = 'UsageError';
    this.usage = usage;
  }
}

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

export interface Parsed {
  values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  positionals: string[];
}

/**
 * curl's and wget's spellings of usp's flags. They are refused with a pointer rather than taken as
 * aliases: `-k` already means usp's `--no-known`, not curl's `--insecure`, so accepting some of
 * curl's letters would promise a compatibility that stops at the one flag where it matters most.
 */
const OTHER_TOOLS_SPELLINGS: Readonly<Record<string, string>> = {
  '-A': 'user-agent',
  '-x': 'proxy',
  '--cacert': 'ca-file',
  '--capath': 'ca-file',
  '-m': 'timeout',
  '--max-time': 'timeout',
  '--connect-timeout': 'timeout',
  '--retry': 'retries',
  '--tries': 'retries',
  '-t': 'retries',
  '--no-check-certificate': 'insecure',
  '--ca-certificate': 'ca-file',
  '-e': 'proxy',
};

/** `parseArgs` in strict mode, its errors turned into usage errors. */
export function parse(args: string[], options: OptionSpec, usage: string): Parsed {
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
    return { values: values as Parsed['values'], positionals };
  } catch (err) {
    const message =
      err instanceof Error ? err.message.replace(/\. To specify a positional.*$/s, '') : String(err);
    throw new UsageError(`${message}${didYouMean(err, options)}`, usage);
  }
}

/** "; did you mean --user-agent?" for an unknown option another tool spells so, when this command has it. */
function didYouMean(err: unknown, options: OptionSpec): string {
  if ((err as { code?: string }).code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return '';
  const given = /^Unknown option '([^']+)'/.exec((err as Error).message)?.[1];
  if (given === undefined) return '';
  const name = given.split('=')[0];
  const ours = Object.hasOwn(OTHER_TOOLS_SPELLINGS, name) ? OTHER_TOOLS_SPELLINGS[name] : undefined;
  if (ours === undefined || !Object.hasOwn(options, ours)) return '';
  const note = ours === 'timeout' ? ' (per request; --deadline for the whole walk)' : '';
  return `; did you mean --${ours}?${note}`;
}

export function str(p: Parsed, name: string): string | undefined {
  const v = p.values[name];
  return typeof v === 'string' ? v : undefined;
}

export function flag(p: Parsed, name: string): boolean {
  return p.values[name] === true;
}

export function list(p: Parsed, name: string): string[] {
  const v = p.values[name];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');
}

/** `-v` count (`-vv` is 2). */
export function count(p: Parsed, name: string): number {
  const v = p.values[name];
  if (v === undefined) return 0;
  return Array.isArray(v) ? v.length : 1;
}

/** A non-negative integer option (`--max-pages 1000`). */
export function integer(p: Parsed, name: string, usage: string, min = 0): number | undefined {
  const v = str(p, name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < min) {
    throw new UsageError(`option --${name} expects an integer >= ${min}, got ${JSON.stringify(v)}`, usage);
  }
  return Number(v);
}

/**
 * A duration in milliseconds: `1500ms`, `30s`, `2m`. A bare number is refused: usp read it as
 * milliseconds, curl and wget read it as seconds, so `--timeout 5` meant 5 ms to one user and 5 s
 * to the next. Asking for the unit costs two characters; guessing either way fails someone silently.
 */
export function duration(p: Parsed, name: string, usage: string): number | undefined {
  const v = str(p, name);
  if (v === undefined) return undefined;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(v.trim());
  if (m !== null && m[2] === undefined) {
    throw new UsageError(`option --${name}: ${m[1]} what? write ${m[1]}s or ${m[1]}ms`, usage);
  }
  if (m === null || Number(m[1]) <= 0) {
    throw new UsageError(
      `option --${name} expects a duration such as 1500ms, 30s or 2m; got ${JSON.stringify(v)}`,
      usage,
    );
  }
  const scale = m[2] === 's' ? 1000 : m[2] === 'm' ? 60_000 : 1;
  return Math.round(Number(m[1]) * scale);
}

/** An option whose value must be one of a list. */
export function choice<T extends string>(
  p: Parsed,
  name: string,
  choices: readonly T[],
  fallback: T,
  usage: string,
): T {
  const v = str(p, name);
  if (v === undefined) return fallback;
  if (!(choices as readonly string[]).includes(v)) {
    throw new UsageError(
      `option --${name}: invalid choice ${JSON.stringify(v)} (choose from ${choices.join(', ')})`,
      usage,
    );
  }
  return v as T;
}

/** Exactly one positional argument. */
export function onePositional(p: Parsed, what: string, usage: string): string {
  if (p.positionals.length === 0)
    throw new UsageError(`the following arguments are required: ${what}`, usage);
  if (p.positionals.length > 1) {
    throw new UsageError(`unrecognized arguments: ${p.positionals.slice(1).join(' ')}`, usage);
  }
  return p.positionals[0];
}

/** `-H "Name: value"` lines as a header object. */
export function headersFrom(lines: string[], usage: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim();
    if (colon <= 0 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || /[\r\n]/.test(line)) {
      throw new UsageError(`option --header expects "Name: value", got ${JSON.stringify(line)}`, usage);
    }
    headers[name.toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** A Redis URL option (`--queue`, `--state` of the distributed mode): redis:// or rediss://. */
export function redisUrl(value: string, name: string, usage: string): string {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    url = null;
  }
  if (url === null || (url.protocol !== 'redis:' && url.protocol !== 'rediss:')) {
    throw new UsageError(
      `option --${name} expects redis://HOST:PORT[/DB], got ${JSON.stringify(value)}`,
      usage,
    );
  }
  // A password on the command line is visible to every user of the machine (ps): as redis-cli
  // does, REDISCLI_AUTH gives it to a URL that carries none.
  const auth = process.env.REDISCLI_AUTH;
  if (url.password === '' && auth !== undefined && auth !== '') {
    url.password = encodeURIComponent(auth);
    return url.href;
  }
  return value;
}
