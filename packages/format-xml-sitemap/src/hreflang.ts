import type { Alternate, PageDraft, ParseContext, XmlElement } from '@usp-ts/core/parse';

/**
 * Reads an `<xhtml:link rel="alternate" hreflang href>` into the draft's alternates, in document
 * order. `rel` is compared case-insensitively; a link without `rel="alternate"`, `hreflang` or
 * `href` (mobile `media` alternates, for example) is ignored with a warning.
 */
export function readAlternate(el: XmlElement, draft: PageDraft, ctx: ParseContext): void {
  const attrs = el.attrs;
  const rel = attrs.rel;
  if (rel === undefined || !isAlternate(rel)) {
    ctx.warn('missing-field', `<link> in ${draft.url || 'a <url>'} ignored: rel is not "alternate"`);
    return;
  }
  const hreflang = attrs.hreflang?.trim();
  const href = attrs.href?.trim();
  if (!hreflang || !href) {
    ctx.warn('missing-field', `<link rel="alternate"> ignored: it needs both hreflang and href`);
    return;
  }
  const alternate: Alternate = { hreflang, href };
  if (draft.alternates === null) draft.alternates = [alternate];
  else (draft.alternates as Alternate[]).push(alternate);
}

function isAlternate(rel: string): boolean {
  const r = rel.trim();
  return r === 'alternate' || r.toLowerCase() === 'alternate';
}
