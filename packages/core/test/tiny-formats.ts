/**
 * Minimal formats for core's own tests: core must not depend on the format packages. They
 * follow the plugin contracts (complete entries only, `end(truncated)`), nothing more.
 */
import { newPageDraft } from '../src/contract/model.js';
import type {
  ParseContext,
  ParseOutcome,
  TextFormat,
  TextParser,
  XmlElement,
  XmlFormat,
  XmlHandler,
} from '../src/contract/plugin.js';

export const SITEMAP_NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';

/** `<urlset>` (sitemap namespace or none): a page per `<url>` with a non-empty `<loc>`. */
export function tinyUrlset(): XmlFormat {
  return {
    kind: 'xml',
    name: 'tiny-urlset',
    roots: [
      { ns: SITEMAP_NS, local: 'urlset' },
      { ns: '', local: 'urlset' },
    ],
    createHandler(ctx: ParseContext, root: XmlElement): XmlHandler {
      const ns = root.ns;
      let loc: string | null = null;
      let inUrl = false;
      return {
        type: 'PagesXMLSitemap',
        open(el) {
          if (el.ns === ns && el.local === 'url' && el.depth === 1) {
            inUrl = true;
            loc = null;
          }
        },
        close(el, text) {
          if (el.ns !== ns) return;
          if (el.local === 'loc' && inUrl) loc = text.trim();
          else if (el.local === 'url' && el.depth === 1) {
            inUrl = false;
            if (loc) ctx.page(newPageDraft(loc));
          }
        },
        end(): ParseOutcome {
          return { type: 'PagesXMLSitemap' };
        },
      };
    },
  };
}

/** `<sitemapindex>`: a child per `<sitemap><loc>`. */
export function tinyIndex(): XmlFormat {
  return {
    kind: 'xml',
    name: 'tiny-index',
    roots: [{ ns: SITEMAP_NS, local: 'sitemapindex' }],
    createHandler(ctx) {
      return {
        type: 'IndexXMLSitemap',
        open() {},
        close(el, text) {
          if (el.local === 'loc' && el.ns === SITEMAP_NS) ctx.child({ url: text.trim(), lastModified: null });
        },
        end: () => ({ type: 'IndexXMLSitemap' }),
      };
    },
  };
}

/** Splits streamed text into lines (`\n`, `\r\n`); a cut last line is dropped when truncated. */
function lineParser(
  onLine: (line: string) => void,
  finish: () => ParseOutcome,
  type: TextParser['type'],
): TextParser {
  let rest = '';
  return {
    type,
    write(text) {
      let start = 0;
      let data = rest + text;
      // Keep memory bounded on a huge line: only its start can matter to these formats.
      if (data.length > 70_000 && data.indexOf('\n') === -1) data = data.slice(0, 70_000);
      for (let nl = data.indexOf('\n', start); nl !== -1; nl = data.indexOf('\n', start)) {
        onLine(data.slice(start, nl).replace(/\r$/, ''));
        start = nl + 1;
      }
      rest = data.slice(start);
    },
    end(truncated) {
      if (!truncated && rest !== '') onLine(rest.replace(/\r$/, ''));
      rest = '';
      return finish();
    },
  };
}

/** One http(s) URL a line, anything else skipped; claims every non-robots document. */
export function tinyText(): TextFormat {
  return {
    kind: 'text',
    name: 'tiny-text',
    claims: (doc) => !new URL(doc.url).pathname.endsWith('/robots.txt'),
    createParser(ctx) {
      return lineParser(
        (line) => {
          const url = line.trim();
          if (/^https?:\/\/\S+$/.test(url)) ctx.page(newPageDraft(url));
        },
        () => ({ type: 'PagesTextSitemap' }),
        'PagesTextSitemap',
      );
    },
  };
}

/** robots.txt by URL path: `Sitemap:` lines become children. */
export function tinyRobots(): TextFormat {
  return {
    kind: 'text',
    name: 'tiny-robots',
    claims: (doc) => new URL(doc.url).pathname.endsWith('/robots.txt'),
    createParser(ctx) {
      return lineParser(
        (line) => {
          const m = /^\s*sitemap\s*:\s*(\S+)/i.exec(line);
          if (m) ctx.child({ url: m[1], lastModified: null });
        },
        () => ({
          type: 'IndexRobotsTxtSitemap',
          robots: { isAllowed: () => true, crawlDelay: () => null, groups: [] },
        }),
        'IndexRobotsTxtSitemap',
      );
    },
  };
}

export function urlsetXml(
  urls: readonly string[],
  head = '<?xml version="1.0" encoding="UTF-8"?>\n',
): string {
  return `${head}<urlset xmlns="${SITEMAP_NS}">\n${urls.map((u) => `  <url><loc>${u}</loc></url>\n`).join('')}</urlset>\n`;
}

export function pageUrls(n: number, prefix = 'http://example.com/page-'): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}${i}`);
}
