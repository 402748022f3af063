import { createRequire, Module } from 'node:module';
import type * as Undici from 'undici';
import type { UndiciInternals } from './hop-request.js';

const require = createRequire(import.meta.url);

/**
 * undici's HTTP/2 client module loads `node:http2` when it is loaded, and with it `node:tls` and
 * `node:crypto` (~1.5 MiB of RSS and their load time), for every program, though it runs only when
 * a server picks h2 in a TLS handshake, which needs `allowH2` (this package never sets it). Its
 * place in the module cache is taken by a stand-in that loads the real module at its first call.
 */
function deferHttp2Client(): void {
  let path: string;
  try {
    path = require.resolve('undici/lib/dispatcher/client-h2.js');
  } catch {
    return;
  }
  if (require.cache[path] !== undefined) return;
  const standIn = new Module(path);
  standIn.filename = path;
  standIn.loaded = true;
  let real: ((...args: unknown[]) => unknown) | null = null;
  standIn.exports = function connectH2(...args: unknown[]): unknown {
    if (real === null) {
      delete require.cache[path];
      real = require(path) as (...args: unknown[]) => unknown;
    }
    return real(...args);
  };
  require.cache[path] = standIn;
}

type RequestFn = (
  this: Undici.Dispatcher,
  options: Undici.Dispatcher.RequestOptions,
) => Promise<Undici.Dispatcher.ResponseData>;

export interface UndiciParts {
  readonly Client: typeof Undici.Client;
  readonly buildConnector: typeof Undici.buildConnector;
  /** undici's `Dispatcher#request`, called on a Client. */
  readonly request: RequestFn;
  /** What `hopRequest` builds a response with; `null` when undici's files moved (then `request`). */
  readonly hop: UndiciInternals | null;
}

/** undici's body stream and header parser, from their own modules. */
function undiciInternals(): UndiciInternals | null {
  try {
    const { Readable: BodyReadable } = require('undici/lib/api/readable.js') as {
      Readable: UndiciInternals['BodyReadable'];
    };
    const { parseHeaders } = require('undici/lib/core/util.js') as {
      parseHeaders: UndiciInternals['parseHeaders'];
    };
    if (typeof BodyReadable === 'function' && typeof parseHeaders === 'function') {
      return { BodyReadable, parseHeaders };
    }
  } catch {
    // `request` then.
  }
  return null;
}

let parts: UndiciParts | null = null;

/**
 * The pieces of undici a direct connection needs (its `Client`, not the `Agent` and `Pool` above
 * it: see `OriginClients`), loaded from their own modules: undici's entry
 * loads every feature it has (fetch, WebSocket, caches, mocks, proxies, interceptors), which
 * costs ~9 MiB and 0.15-0.3 s at import. Should a future undici move these files, the entry is
 * used instead.
 */
export function undiciCore(): UndiciParts {
  if (parts !== null) return parts;
  try {
    deferHttp2Client();
    const Client = require('undici/lib/dispatcher/client.js') as typeof Undici.Client;
    const buildConnector = require('undici/lib/core/connect.js') as typeof Undici.buildConnector;
    const request = require('undici/lib/api/api-request.js') as RequestFn;
    if (
      typeof Client === 'function' &&
      typeof buildConnector === 'function' &&
      typeof request === 'function'
    ) {
      parts = { Client, buildConnector, request, hop: undiciInternals() };
      return parts;
    }
  } catch {
    // Fall through to the entry.
  }
  const u = undiciEntry();
  parts = {
    Client: u.Client,
    buildConnector: u.buildConnector,
    request: u.Dispatcher.prototype.request as RequestFn,
    hop: null,
  };
  return parts;
}

/** All of undici, for the proxy path (ProxyAgent relies on methods the entry installs). */
export function undiciEntry(): typeof Undici {
  return require('undici') as typeof Undici;
}

/**
 * `node:http`'s reason phrases, for a response that gives none. Loaded on first use: undici has
 * loaded `node:http` by the time a response exists, so this costs a parse-only program nothing.
 */
export function nodeStatusCodes(): Readonly<Record<number, string | undefined>> {
  return (require('node:http') as typeof import('node:http')).STATUS_CODES;
}
