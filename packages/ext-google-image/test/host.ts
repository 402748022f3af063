import {
  createExtensionRouter,
  createRegistry,
  newPageDraft,
  type Page,
  type PageDraft,
  parseDocument,
  type Warning,
  type XmlExtension,
  type XmlFormat,
} from '@usp-ts/core';

/**
 * A minimal host format for testing an extension on its own, the way a format runs it: root
 * `<entries>`, each `<entry loc="…">` one page, everything inside routed by core's extension
 * router. (The real host, format-xml-sitemap, cannot be a dev dependency here: it depends on
 * this package for its own tests.)
 */
export function hostFormat(extensions: readonly XmlExtension[]): XmlFormat {
  return {
    kind: 'xml',
    name: 'test-host',
    roots: [{ ns: '*', local: 'entries' }],
    createHandler(ctx) {
      const router = createExtensionRouter(extensions, ctx);
      let draft: PageDraft | null = null;
      return {
        open(el) {
          if (el.depth === 1) {
            draft = newPageDraft(el.attrs.loc ?? '');
            router.startEntry(draft);
          } else if (draft !== null) router.open(el, draft);
        },
        close(el, text) {
          if (draft === null) return;
          if (el.depth > 1) {
            router.close(el, text, draft);
            return;
          }
          router.endEntry(draft);
          ctx.page(draft);
          draft = null;
        },
        end: () => ({ type: 'PagesXMLSitemap' }),
      };
    },
  };
}

/** Parses `<entries xmlns:…>…</entries>` through core's engine with the extension hosted. */
export async function runExtension(
  extension: XmlExtension,
  xml: string,
): Promise<{ pages: Page[]; warnings: Warning[]; codes: string[] }> {
  const doc = await parseDocument({
    url: 'http://example.com/sitemap.xml',
    body: xml,
    registry: createRegistry([hostFormat([extension])]),
  });
  return {
    pages: [...doc.sitemap.allPages()],
    warnings: doc.warnings,
    codes: doc.warnings.map((w) => w.code),
  };
}
