import { InvalidOptionError } from '@usp-ts/core';

/** A proxy per URL scheme; a scheme without one goes direct. */
export interface ProxyRoutes {
  readonly http?: string;
  readonly https?: string;
}

/** Which proxy a request takes, resolved from the `proxy` and `noProxy` options. */
export interface ResolvedProxy {
  readonly http: string | undefined;
  readonly https: string | undefined;
  /** Every host goes direct (`NO_PROXY=*`). */
  readonly bypassAll: boolean;
  /** Lower-cased hosts (IPv6 without brackets) or domain suffixes, each with an optional port. */
  readonly bypass: readonly { readonly host: string; readonly port: string | null }[];
}

export const NO_PROXY: ResolvedProxy = { http: undefined, https: undefined, bypassAll: false, bypass: [] };

function checkProxyUrl(name: string, value: unknown): string {
  let ok = false;
  try {
    const u = new URL(value as string);
    ok = typeof value === 'string' && (u.protocol === 'http:' || u.protocol === 'https:');
  } catch {
    ok = false;
  }
  if (!ok) throw new InvalidOptionError(name, `expected an http(s) URL, got ${JSON.stringify(value)}`);
  return value as string;
}

/** One `noProxy` entry as curl reads it: `host`, `.domain`, `host:port`, `[::1]:8080`, or `*`. */
function parseEntry(entry: string): { host: string; port: string | null } {
  const e = entry.trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(e);
  if (bracketed !== null) return { host: bracketed[1], port: bracketed[2] ?? null };
  const withPort = /^([^:]+):(\d+)$/.exec(e);
  const host = withPort === null ? e : withPort[1];
  return { host: host.replace(/^\*?\./, ''), port: withPort === null ? null : withPort[2] };
}

/** Checks the `proxy` and `noProxy` options and resolves them into routes. */
export function resolveProxy(proxy: unknown, noProxy: unknown): ResolvedProxy {
  let http: string | undefined;
  let https: string | undefined;
  if (typeof proxy === 'string') {
    http = https = checkProxyUrl('proxy', proxy);
  } else if (proxy !== undefined) {
    if (proxy === null || typeof proxy !== 'object') {
      throw new InvalidOptionError('proxy', 'expected a URL or { http, https } URLs');
    }
    const routes = proxy as ProxyRoutes;
    for (const key of Object.keys(routes)) {
      if (key !== 'http' && key !== 'https') {
        throw new InvalidOptionError(
          'proxy',
          `unknown scheme ${JSON.stringify(key)}: expected http or https`,
        );
      }
    }
    if (routes.http !== undefined) http = checkProxyUrl('proxy.http', routes.http);
    if (routes.https !== undefined) https = checkProxyUrl('proxy.https', routes.https);
  }
  if (noProxy !== undefined && (!Array.isArray(noProxy) || noProxy.some((e) => typeof e !== 'string'))) {
    throw new InvalidOptionError('noProxy', 'expected an array of host names');
  }
  const entries = ((noProxy ?? []) as string[]).map((e) => e.trim()).filter((e) => e !== '');
  return {
    http,
    https,
    bypassAll: entries.includes('*'),
    bypass: entries.filter((e) => e !== '*').map(parseEntry),
  };
}

/** The proxy a URL goes through, or `undefined` to connect directly. */
export function proxyFor(url: URL, routes: ResolvedProxy): string | undefined {
  const proxy = url.protocol === 'https:' ? routes.https : routes.http;
  if (proxy === undefined || routes.bypassAll) return undefined;
  const host = url.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  const port = url.port === '' ? (url.protocol === 'https:' ? '443' : '80') : url.port;
  for (const rule of routes.bypass) {
    if (rule.port !== null && rule.port !== port) continue;
    if (host === rule.host || host.endsWith(`.${rule.host}`)) return undefined;
  }
  return proxy;
}

/**
 * `proxy` and `noProxy` options from the environment, as curl reads it: `https_proxy` for https
 * URLs, `http_proxy` for http ones (each also in upper case, the lower case winning), `no_proxy`
 * for the hosts that go direct. A variable set to an empty string counts as unset.
 */
export function proxyFromEnv(env: Readonly<Record<string, string | undefined>>): {
  proxy?: ProxyRoutes;
  noProxy?: string[];
} {
  const read = (name: string): string | undefined => {
    const v = env[name] ?? env[name.toUpperCase()];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const http = read('http_proxy');
  const https = read('https_proxy');
  const noProxy = read('no_proxy');
  return {
    ...(http !== undefined || https !== undefined
      ? { proxy: { ...(http !== undefined ? { http } : {}), ...(https !== undefined ? { https } : {}) } }
      : {}),
    ...(noProxy !== undefined ? { noProxy: noProxy.split(/[\s,]+/).filter((e) => e !== '') } : {}),
  };
}
