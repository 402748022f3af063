import { existsSync, readFileSync, statSync } from 'node:fs';
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join, resolve, sep } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { type CaseMeta, casesDir } from './corpus.js';

/** One entry of `site.json` (corpus README section 4.1). */
export interface SiteResponseSpec {
  status?: number;
  reason?: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface SiteSpec {
  paths: Record<string, SiteResponseSpec>;
  default?: SiteResponseSpec;
}

export interface SiteServer {
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  readonly origin: string;
  readonly port: number;
  /** The case's `homepage` with `PORT` filled in (the origin when the case has none). */
  readonly homepage: string;
  /** `GET /path -> status` for every request, in arrival order (path as sent). */
  readonly requests: readonly string[];
  /** The request log as counts, the shape of `expected_requests.json`. */
  requestCounts(): Record<string, number>;
  close(): Promise<void>;
}

const PLACEHOLDER = Buffer.from('127.0.0.1:PORT', 'latin1');
const FALLBACK: SiteResponseSpec = {
  status: 404,
  reason: 'Not Found',
  headers: { 'Content-Type': 'text/html' },
  body: '<h1>404 Not Found!</h1>',
};

/** Serves the site of a site case (`cases/<name>/site`) on 127.0.0.1 with a free port. */
export async function serveSiteCase(name: string): Promise<SiteServer> {
  const caseDir = join(casesDir(), name);
  const meta = JSON.parse(readFileSync(join(caseDir, 'case.json'), 'utf8')) as CaseMeta;
  return serveSiteDir(join(caseDir, 'site'), meta.homepage);
}

/**
 * Serves a folder laid out as a site case's `site/` (files by URL path plus `site.json`), following
 * the corpus README section 4.1: listed paths get exactly their status, reason and headers; unlisted
 * files get 200 with no entity headers but Content-Length; everything else gets `default`;
 * `127.0.0.1:PORT` is filled in in bodies (inside complete gzip streams too) and header values.
 */
export async function serveSiteDir(siteDir: string, homepage?: string): Promise<SiteServer> {
  const root = resolve(siteDir);
  const specPath = join(root, 'site.json');
  const spec: SiteSpec = existsSync(specPath)
    ? (JSON.parse(readFileSync(specPath, 'utf8')) as SiteSpec)
    : { paths: {} };
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  let port = 0;

  const fileFor = (urlPath: string): string | null => {
    let decoded: string;
    try {
      decoded = decodeURIComponent(urlPath);
    } catch {
      return null;
    }
    const file = resolve(root, `.${decoded.startsWith('/') ? decoded : `/${decoded}`}`);
    if (!file.startsWith(root + sep) || file === specPath) return null;
    if (!existsSync(file) || !statSync(file).isFile()) return null;
    return file;
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const target = req.url ?? '/';
    const pathOnly = target.split('?')[0];
    const listed = spec.paths[target] ?? spec.paths[pathOnly];
    let status: number;
    let reason: string | undefined;
    let headers: Record<string, string>;
    let body: Buffer;
    if (listed !== undefined) {
      status = listed.status ?? 200;
      reason = listed.reason;
      headers = { ...(listed.headers ?? {}) };
      if (listed.body !== undefined) body = Buffer.from(listed.body, 'utf8');
      else {
        const file = fileFor(pathOnly);
        body = file === null ? Buffer.alloc(0) : readFileSync(file);
      }
    } else {
      const file = fileFor(pathOnly);
      if (file !== null) {
        status = 200;
        headers = {};
        body = readFileSync(file);
      } else {
        const d = spec.default ?? FALLBACK;
        status = d.status ?? 404;
        reason = d.reason;
        headers = { ...(d.headers ?? {}) };
        body = Buffer.from(d.body ?? '', 'utf8');
      }
    }
    requests.push(`${req.method} ${target} -> ${status}`);
    const filled = Buffer.from(`127.0.0.1:${port}`, 'latin1');
    body = templateBody(body, filled);
    const outHeaders: Record<string, string | number> = {};
    for (const [k, v] of Object.entries(headers))
      outHeaders[k] = v.split('127.0.0.1:PORT').join(`127.0.0.1:${port}`);
    outHeaders['Content-Length'] = body.length;
    res.sendDate = false;
    res.writeHead(status, reason ?? STATUS_CODES[status] ?? '', outHeaders);
    res.end(req.method === 'HEAD' ? undefined : body);
  };

  const server: Server = createServer((req, res) => {
    try {
      handle(req, res);
    } catch {
      res.destroy();
    }
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    port,
    homepage: homepage === undefined ? origin : homepage.split('127.0.0.1:PORT').join(`127.0.0.1:${port}`),
    requests,
    requestCounts() {
      const counts: Record<string, number> = {};
      for (const r of requests) counts[r] = (counts[r] ?? 0) + 1;
      return counts;
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}

/**
 * Fills in the port. A complete gzip stream is templated inside and re-compressed (usp never
 * looks at gzip headers, so level and mtime do not matter); a broken one is sent byte for byte.
 */
export function templateBody(body: Buffer, filled: Buffer): Buffer {
  if (body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b) {
    let inner: Buffer;
    try {
      inner = gunzipSync(body);
    } catch {
      return body;
    }
    // Untouched streams keep their exact bytes (trailing data, several members).
    return inner.includes(PLACEHOLDER) ? gzipSync(replaceBytes(inner, PLACEHOLDER, filled)) : body;
  }
  return body.includes(PLACEHOLDER) ? replaceBytes(body, PLACEHOLDER, filled) : body;
}

function replaceBytes(haystack: Buffer, needle: Buffer, replacement: Buffer): Buffer {
  const parts: Buffer[] = [];
  let from = 0;
  for (let at = haystack.indexOf(needle, from); at !== -1; at = haystack.indexOf(needle, from)) {
    parts.push(haystack.subarray(from, at), replacement);
    from = at + needle.length;
  }
  parts.push(haystack.subarray(from));
  return Buffer.concat(parts);
}

/**
 * Differences between a request log and `expected_requests.json` (README 4.4): informative only,
 * since another HTTP client may legitimately retry or redirect differently. One line per key.
 */
export function diffRequestCounts(
  actual: Record<string, number>,
  expected: Record<string, number>,
): string[] {
  const out: string[] = [];
  for (const key of [...new Set([...Object.keys(expected), ...Object.keys(actual)])].sort()) {
    const a = actual[key] ?? 0;
    const e = expected[key] ?? 0;
    if (a !== e) out.push(`${key}: ${a} request(s), usp made ${e}`);
  }
  return out;
}
