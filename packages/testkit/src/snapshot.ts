import {
  createRegistry,
  type DocumentLimits,
  type PageJSON,
  type ParsedSitemap,
  type Plugin,
  parseSitemap,
  type Registry,
  sitemapToJSON,
} from '@usp-ts/core';

/** What the kit compares: the node as JSON, the children, and how the parse ended. */
export interface DocumentSnapshot {
  type: string;
  reason?: string;
  pages: PageJSON[];
  children: { url: string; lastModified: string | null }[];
  truncated: boolean;
  /** `code: message`, in order. */
  warnings: string[];
  format: string | null;
}

export interface KitSample {
  /** Shown in test names. */
  name: string;
  /** The document URL (robots.txt formats claim by it). */
  url: string;
  input: string | Uint8Array;
  headers?: Readonly<Record<string, string>>;
}

export function snapshot(doc: ParsedSitemap): DocumentSnapshot {
  const json = sitemapToJSON(doc.sitemap);
  return {
    type: json.type,
    ...(json.reason !== undefined ? { reason: json.reason } : {}),
    pages: json.pages ?? [],
    children: doc.children.map((c) => ({
      url: c.url,
      lastModified: c.lastModified?.toSourceString() ?? null,
    })),
    truncated: doc.truncated,
    warnings: doc.warnings.map((w) => `${w.code}: ${w.message}`),
    format: doc.format ?? null,
  };
}

export function toBytes(input: string | Uint8Array): Uint8Array {
  return typeof input === 'string' ? new TextEncoder().encode(input) : input;
}

/** The bytes as chunks ending at the given offsets (sorted, inside the bytes). */
export function chunked(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const points = [0, ...cuts.filter((c) => c > 0 && c < bytes.length), bytes.length];
  const out: Uint8Array[] = [];
  for (let i = 1; i < points.length; i++) {
    if (points[i] > points[i - 1]) out.push(bytes.subarray(points[i - 1], points[i]));
  }
  return out;
}

export interface ParseBytesOptions {
  url: string;
  headers?: Readonly<Record<string, string>>;
  limits?: Partial<DocumentLimits>;
  /** When set, the body fails with this error after its chunks (a reset connection). */
  breakWith?: Error;
}

/** Parses chunks through `parseSitemap` as a streamed body. */
export async function parseChunks(
  registry: Registry,
  chunks: readonly Uint8Array[],
  options: ParseBytesOptions,
): Promise<ParsedSitemap> {
  async function* body(): AsyncGenerator<Uint8Array> {
    for (const chunk of chunks) yield chunk;
    if (options.breakWith !== undefined) throw options.breakWith;
  }
  const headers = options.headers ?? {};
  return parseSitemap({
    url: options.url,
    body: body(),
    registry,
    headers: (name) => {
      for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name.toLowerCase()) return v;
      return null;
    },
    ...(options.limits !== undefined ? { limits: options.limits } : {}),
  });
}

export function registryOf(plugins: readonly Plugin[]): Registry {
  return createRegistry(plugins);
}
