import {
  checkExtensions,
  createExtensionRouter,
  createRegistry,
  newPageDraft,
  type Page,
  type PageDraft,
  type ParsedDocument,
  parseDocument,
  type Warning,
  type XmlExtension,
  type XmlFormat,
} from '@usp-ts/core';

/** Namespace of the host documents: `<entries>` of `<entry>`, each with a `<loc>`. */
export const KIT_NS = 'urn:usp-ts:format-testkit';

/**
 * A minimal XML format that hosts namespace extensions, so an extension package can be tested
 * (and run through the kit) without depending on a real format:
 *
 * ```xml
 * <entries xmlns="urn:usp-ts:format-testkit" xmlns:news="...">
 *   <entry><loc>https://example.com/a</loc><news:news>...</news:news></entry>
 * </entries>
 * ```
 *
 * Each complete `<entry>` with a `<loc>` becomes a page; elements of claimed namespaces go to
 * the extensions through core's router, as a real format routes them.
 */
export function extensionHost(
  extensions: readonly XmlExtension[],
  name = 'testkit-extension-host',
): XmlFormat {
  checkExtensions(extensions);
  return {
    kind: 'xml',
    name,
    roots: [{ ns: KIT_NS, local: 'entries' }],
    createHandler(ctx) {
      const router = createExtensionRouter(extensions, ctx);
      let draft: PageDraft | null = null;
      return {
        type: 'PagesXMLSitemap',
        open(el) {
          if (el.depth === 1) {
            if (el.ns === KIT_NS && el.local === 'entry') {
              draft = newPageDraft('');
              router.startEntry(draft);
            }
            return;
          }
          if (draft !== null) router.open(el, draft);
        },
        close(el, text) {
          if (draft === null) return;
          if (el.depth === 1) {
            const done = draft;
            draft = null;
            router.endEntry(done);
            if (done.url !== '') ctx.page({ ...done });
            return;
          }
          if (router.close(el, text, draft)) return;
          if (el.depth === 2 && el.ns === KIT_NS && el.local === 'loc') draft.url = text.trim();
        },
        end: () => ({ type: 'PagesXMLSitemap' }),
      };
    },
  };
}

/** Wraps entry markup in the host's root, declaring the given prefixes. */
export function wrapEntries(entriesXml: string, namespaces: Readonly<Record<string, string>> = {}): string {
  const decls = Object.entries(namespaces)
    .map(([prefix, uri]) => ` xmlns:${prefix}="${uri}"`)
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<entries xmlns="${KIT_NS}"${decls}>${entriesXml}</entries>\n`;
}

export interface RunExtensionOptions {
  url?: string;
  /** Prefix → namespace URI declarations on the root, when `xml` is only the entries. */
  namespaces?: Readonly<Record<string, string>>;
}

export interface RunExtensionResult {
  pages: Page[];
  warnings: Warning[];
  document: ParsedDocument;
}

/**
 * Parses entries with only these extensions: `xml` is either a whole `<entries>` document or
 * just the `<entry>` elements (then wrapped, declaring `options.namespaces`).
 */
export async function runExtension(
  extension: XmlExtension | readonly XmlExtension[],
  xml: string,
  options: RunExtensionOptions = {},
): Promise<RunExtensionResult> {
  const extensions = Array.isArray(extension) ? extension : [extension as XmlExtension];
  const whole = /^\s*(<\?xml[^>]*>\s*)?<entries[\s>]/.test(xml);
  const document = await parseDocument({
    url: options.url ?? 'https://example.com/sitemap.xml',
    body: whole ? xml : wrapEntries(xml, options.namespaces),
    registry: createRegistry([extensionHost(extensions)]),
  });
  const sitemap = document.sitemap;
  const pages = 'pages' in sitemap ? (sitemap as { pages: Page[] }).pages : [];
  return { pages, warnings: document.warnings, document };
}
