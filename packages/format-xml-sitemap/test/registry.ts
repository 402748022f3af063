import {
  type ChildRef,
  createRegistry,
  type DocumentLimits,
  headerLookup,
  type Page,
  type ParsedSitemap,
  parseSitemap,
  type Registry,
  type Warning,
  type XmlFormat,
} from '@usp-ts/core';
import { googleImage } from '@usp-ts/ext-google-image';
import { googleNews } from '@usp-ts/ext-google-news';
import { googleVideo } from '@usp-ts/ext-google-video';
import { xmlSitemap } from '../src/index.js';

/** The format as the `usp` package ships it: with the three Google extensions. */
export function sitemapRegistry(): Registry {
  return createRegistry([xmlSitemap({ extensions: [googleNews(), googleImage(), googleVideo()] })]);
}

const shared = sitemapRegistry();

export interface ParseOptions {
  url?: string;
  headers?: Record<string, string>;
  registry?: Registry;
  format?: XmlFormat;
  limits?: Partial<DocumentLimits>;
}

/** Parses one document through core's driver and XML engine. */
export function parse(body: string | Uint8Array, options: ParseOptions = {}): Promise<ParsedSitemap> {
  return parseSitemap({
    url: options.url ?? 'http://example.com/sitemap.xml',
    body,
    registry: options.registry ?? (options.format ? createRegistry([options.format]) : shared),
    headers: headerLookup(options.headers),
    limits: options.limits,
  });
}

export interface Parsed {
  type: string;
  pages: Page[];
  children: ChildRef[];
  warnings: Warning[];
  /** Warning codes in order, without the engine's `truncated` note. */
  codes: string[];
  truncated: boolean;
}

/** `parse`, flattened for assertions. */
export async function run(body: string | Uint8Array, options: ParseOptions = {}): Promise<Parsed> {
  const doc = await parse(body, options);
  return {
    type: doc.sitemap.type,
    pages: [...doc.sitemap.allPages()],
    children: doc.children,
    warnings: doc.warnings,
    codes: doc.warnings.map((w) => w.code).filter((c) => c !== 'truncated'),
    truncated: doc.truncated,
  };
}
