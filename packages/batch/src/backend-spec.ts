import { InvalidOptionError } from '@usp-ts/core';

// One resolver for every backend a runner opens from a spec (`--state`, `--out`, the library's
// strings): a spec names a driver by its URL scheme, or is a plain path. The drivers are a list the
// caller composes (usp's CLI lists the ones it ships, loading optional packages lazily), so a
// new backend is a driver added to that list, and a runner never sniffs schemes itself.

/** A spec split into the driver's scheme and what that driver opens. */
export interface BackendSpec {
  /** The spec as given. */
  readonly text: string;
  /**
   * The scheme, lower case, without its `:` (`redis`, `sqlite`, `postgres`), or `''` for a plain
   * path. One letter before a `:` is a Windows drive, not a scheme.
   */
  readonly scheme: string;
  /**
   * What follows `scheme:` (the path of `sqlite:runs/state.db`), the whole spec for a plain
   * path. A driver of a URL scheme (`redis://…`) reads `text`.
   */
  readonly location: string;
}

/** Opens one kind of backend (a state store, a site sink) for some schemes. */
export interface BackendDriver<T, C = undefined> {
  /** The schemes it opens (`['redis', 'rediss']`); `''` for a plain path. */
  readonly schemes: readonly string[];
  /** The forms of spec it takes, for messages: `FILE`, `sqlite:FILE`, `redis://HOST[:PORT][/DB]`. */
  readonly forms: readonly string[];
  /**
   * Whether it takes this spec of one of its schemes (default: all): two drivers of plain paths
   * tell theirs apart by name (`results.sqlite` a file store, any other path a directory).
   */
  matches?(spec: BackendSpec): boolean;
  /** Opens the backend. Errors are the backend's own (a locked file, a server that does not answer). */
  open(spec: BackendSpec, context: C): Promise<T>;
}

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]+):/;

/** Splits a spec (see `BackendSpec`); throws `InvalidOptionError` for an empty one. */
export function parseBackendSpec(text: string, option = 'spec'): BackendSpec {
  if (typeof text !== 'string' || text.trim() === '') {
    throw new InvalidOptionError(option, `expected a path or a URL, got ${JSON.stringify(text)}`);
  }
  const m = SCHEME.exec(text);
  if (m === null) return { text, scheme: '', location: text };
  return { text, scheme: m[1].toLowerCase(), location: text.slice(m[0].length) };
}

/**
 * Opens the backend `spec` names with the first of `drivers` that takes it (its scheme, and
 * `matches` when the driver has one). A scheme no
 * driver takes is one `InvalidOptionError` (code `USP_INVALID_OPTION`) naming `option` and the
 * forms the drivers take.
 */
export async function openBackend<T, C>(
  spec: string,
  drivers: readonly BackendDriver<T, C>[],
  context: C,
  option: string,
): Promise<T> {
  const parsed = parseBackendSpec(spec, option);
  const driver = drivers.find((d) => d.schemes.includes(parsed.scheme) && (d.matches?.(parsed) ?? true));
  if (driver === undefined) {
    const forms = drivers.flatMap((d) => d.forms).join(', ');
    const what = parsed.scheme === '' ? 'a plain path' : `the scheme ${parsed.scheme}:`;
    throw new InvalidOptionError(
      option,
      `${what} is not supported here (${JSON.stringify(spec)}); expected ${forms}`,
    );
  }
  return driver.open(parsed, context);
}
