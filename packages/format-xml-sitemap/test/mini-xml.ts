import type {
  ChildRef,
  Page,
  ParseContext,
  ParseLimits,
  ParseOutcome,
  Warning,
  XmlElement,
  XmlFormat,
} from '@usp-ts/core';

/**
 * A test-only driver for well-formed XML: tokenises with regular expressions, resolves namespaces
 * and calls an XmlFormat's handler as core's engine does. It lets the handlers be tested on their
 * own; the engine's behaviour on malformed input is tested through parseDocument.
 */
export interface Driven {
  pages: Page[];
  children: ChildRef[];
  warnings: Warning[];
  outcome: ParseOutcome;
}

const DEFAULT_LIMITS: ParseLimits = {
  maxPagesPerDocument: 1e9,
  maxChildrenPerIndex: 1e9,
  maxUrlLength: 2048,
};
const TOKEN =
  /<!--[\s\S]*?-->|<!\[CDATA\[([\s\S]*?)\]\]>|<\?[\s\S]*?\?>|<(\/?)([^\s/>]+)((?:\s+[^\s=]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>|([^<]+)/g;
const ATTR = /([^\s=]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

export function decode(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_m, e: string) => {
    if (e[0] === '#')
      return String.fromCodePoint(
        e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1)),
      );
    return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[e.toLowerCase()] as string;
  });
}

export function drive(
  format: XmlFormat,
  xml: string,
  options: { url?: string; limits?: Partial<ParseLimits>; cutAfterTokens?: number } = {},
): Driven {
  const url = options.url ?? 'http://example.com/sitemap.xml';
  const out: Driven = { pages: [], children: [], warnings: [], outcome: { type: 'InvalidSitemap' } };
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const ctx: ParseContext = {
    url,
    limits,
    warn: (code, message) => out.warnings.push({ code, message, url }),
    page: (p) => {
      out.pages.push(p);
      return out.pages.length < limits.maxPagesPerDocument;
    },
    child: (c) => {
      out.children.push(c);
      return out.children.length < limits.maxChildrenPerIndex;
    },
  };
  const scopes: Record<string, string>[] = [{ xml: 'http://www.w3.org/XML/1998/namespace' }];
  const stack: XmlElement[] = [];
  let handler: ReturnType<XmlFormat['createHandler']> | null = null;
  let text = '';
  let tokens = 0;
  for (const m of xml.matchAll(TOKEN)) {
    if (options.cutAfterTokens !== undefined && tokens++ >= options.cutAfterTokens) {
      out.outcome = handler?.end(true) ?? out.outcome;
      return out;
    }
    const [whole, cdata, slash, qname, attrText, selfClose, chars] = m;
    if (chars !== undefined) text += decode(chars);
    else if (cdata !== undefined) text += cdata;
    else if (qname === undefined || whole.startsWith('<!--') || whole.startsWith('<?')) continue;
    else if (slash === '/') {
      const el = stack.pop()!;
      scopes.pop();
      if (el.depth > 0) handler?.close(el, text);
      text = '';
    } else {
      const attrs: Record<string, string> = {};
      const scope: Record<string, string> = { ...scopes[scopes.length - 1] };
      for (const a of (attrText ?? '').matchAll(ATTR)) {
        const value = decode(a[2] ?? a[3]);
        if (a[1] === 'xmlns') scope[''] = value;
        else if (a[1].startsWith('xmlns:')) scope[a[1].slice(6)] = value;
        else attrs[a[1]] = value;
      }
      scopes.push(scope);
      const colon = qname.indexOf(':');
      const prefix = colon < 0 ? '' : qname.slice(0, colon);
      const known = prefix in scope;
      const el: XmlElement = {
        ns: known ? scope[prefix] : '',
        local: colon < 0 || !known ? qname : qname.slice(colon + 1),
        attrs,
        depth: stack.length,
      };
      text = '';
      if (el.depth === 0) handler = format.createHandler(ctx, el);
      else handler?.open(el);
      stack.push(el);
      if (selfClose === '/') {
        stack.pop();
        scopes.pop();
        if (el.depth > 0) handler?.close(el, '');
      }
    }
  }
  out.outcome = handler?.end(stack.length > 0) ?? out.outcome;
  return out;
}
