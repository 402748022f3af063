import { normalizeHost } from './options.js';

/** A proxy URL as messages name it: scheme, host and port, never its credentials. */
export function proxyName(proxy: string): string {
  try {
    return new URL(proxy).origin;
  } catch {
    return 'the proxy';
  }
}

/** The port a proxy URL connects to. */
function proxyPort(u: URL): string {
  if (u.port !== '') return u.port;
  return u.protocol === 'https:' ? '443' : '80';
}

/**
 * Whether a request sent through `proxy` failed at the proxy rather than at the site: the proxy
 * could not be reached (refused, unresolved, timed out: the error names the proxy's host or
 * port), its TLS failed, or it answered the tunnel's CONNECT with something other than 200 (a
 * 407, or a 502 when it could not reach the site either).
 */
export function isProxyFailure(err: unknown, proxy: string): boolean {
  const e = err as {
    code?: unknown;
    message?: unknown;
    hostname?: unknown;
    port?: unknown;
    address?: unknown;
  };
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : '';
  if (code === 'UND_ERR_PRX_TLS' || message.startsWith('Proxy response (')) return true;
  let u: URL;
  try {
    u = new URL(proxy);
  } catch {
    return false;
  }
  const host = normalizeHost(u.hostname);
  // A tunnel's connection is the proxy's: the site's own connection is the proxy's business.
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return true;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return e.hostname === host;
  if (e.port !== undefined && String(e.port) === proxyPort(u)) {
    return e.address === undefined || e.address === host || !/^[\d.]+$|:/.test(host);
  }
  return false;
}
