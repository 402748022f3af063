import { readFileSync } from 'node:fs';
import { proxyFromEnv, type WebClientOptions } from '@usp-ts/fetcher';
import {
  duration,
  flag,
  headersFrom,
  integer,
  list,
  type OptionSpec,
  type Parsed,
  str,
  UsageError,
} from './args.js';

/** Network options shared by `ls` and `validate`. */
export const NETWORK_OPTIONS = {
  'user-agent': { type: 'string' },
  header: { type: 'string', short: 'H', multiple: true },
  proxy: { type: 'string' },
  insecure: { type: 'boolean' },
  'ca-file': { type: 'string' },
  'max-size': { type: 'string' },
  timeout: { type: 'string' },
  concurrency: { type: 'string' },
  retries: { type: 'string' },
  'allow-private-networks': { type: 'boolean' },
} satisfies OptionSpec;

export const NETWORK_HELP = `network:
  --user-agent UA           User-Agent header (default: usp-ts/<version> (+https://www.npmjs.com/package/usp))
  -H, --header "NAME: VALUE"
                            a request header (repeatable), e.g. "Cookie: session=1" or
                            "Authorization: Bearer ..."; never sent past a redirect to another origin
  --proxy URL               http(s) proxy for every request (default: https_proxy for https URLs,
                            http_proxy for http ones, hosts in no_proxy direct, as curl)
  --insecure                don't verify TLS certificates (-k is usp's --no-known)
  --ca-file FILE            trust the certificate authorities in this PEM file instead of Node's
  --max-size SIZE           largest sitemap body, after decompression: 500k, 10M, 1G or bytes
                            (default 100M, as usp); a larger one becomes an invalid sitemap
  --timeout DURATION        time one request may take, headers and body included: 1500ms,
                            30s, 2m (default 2m); unset, the headers may take 30s of it at most
                            and the body may stall 60s at most
  --retries N               attempts per request, the first included (default 5, as usp)
  --concurrency N           sitemaps fetched at once (default 4)
  --allow-private-networks  allow loopback, private and link-local addresses everywhere; without
                            it only the origin you name (scheme, host, port) may be private (a
                            sitemap could otherwise point the crawler at your network)`;

const SIZE_UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/** A byte size: `1048576`, `500k`, `10M`, `1G` (binary units; a trailing `B`/`iB` is allowed). */
function size(p: Parsed, name: string, usage: string): number | undefined {
  const v = str(p, name);
  if (v === undefined) return undefined;
  const m = /^(\d+(?:\.\d+)?)\s*([kmg]?)(?:i?b)?$/i.exec(v.trim());
  const bytes = m === null ? Number.NaN : Math.floor(Number(m[1]) * SIZE_UNITS[m[2].toLowerCase()]);
  if (!Number.isSafeInteger(bytes) || bytes < 1) {
    throw new UsageError(
      `option --${name} expects a size such as 500k, 10M or 1G; got ${JSON.stringify(v)}`,
      usage,
    );
  }
  return bytes;
}

function readCaFile(file: string, usage: string): string {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(
      `option --ca-file: cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (err as Error).message}`,
      usage,
    );
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new UsageError(`option --ca-file: ${file} holds no PEM certificate`, usage);
  }
  return pem;
}

function checkProxy(url: string, usage: string): string {
  let ok = false;
  try {
    const u = new URL(url);
    ok = u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    ok = false;
  }
  if (!ok) throw new UsageError(`option --proxy expects an http(s) URL, got ${JSON.stringify(url)}`, usage);
  return url;
}

/**
 * Client options from the command line. Without `--allow-private-networks` the library still lets
 * a private host the user named through (see `clientOptionsFor`), and nothing else private.
 * `env` is where `https_proxy`, `http_proxy` and `no_proxy` are read when `--proxy` is absent;
 * `no_proxy` applies to `--proxy` too, as in curl.
 */
export function webClientOptionsFrom(
  p: Parsed,
  usage: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): WebClientOptions {
  const headers = headersFrom(list(p, 'header'), usage);
  const proxyFlag = str(p, 'proxy');
  const fromEnv = proxyFromEnv(env);
  const caFile = str(p, 'ca-file');
  const maxSize = size(p, 'max-size', usage);
  const userAgent = str(p, 'user-agent') ?? headers['user-agent'];
  delete headers['user-agent'];
  return {
    userAgent,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    ...(proxyFlag !== undefined
      ? { proxy: checkProxy(proxyFlag, usage) }
      : fromEnv.proxy
        ? { proxy: fromEnv.proxy }
        : {}),
    ...(fromEnv.noProxy !== undefined ? { noProxy: fromEnv.noProxy } : {}),
    ...(flag(p, 'insecure') ? { tlsVerify: false } : {}),
    ...(caFile !== undefined ? { tlsCa: readCaFile(caFile, usage) } : {}),
    // The cap is on the document as parsed; the wire cap follows, as a body is never larger sent.
    ...(maxSize !== undefined ? { maxDecodedBytes: maxSize, maxBodyBytes: maxSize } : {}),
    requestTimeoutMs: duration(p, 'timeout', usage),
    retries: integer(p, 'retries', usage, 1),
    allowPrivateNetworks: flag(p, 'allow-private-networks'),
  };
}
