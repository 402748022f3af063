/**
 * A generator of sitemap-like XML for the differential tests: clean documents of the constructs
 * sitemaps use, and dirty ones with what they get wrong (entities HTML has and XML lacks, a bare
 * `&`, DOCTYPEs, names outside ASCII, broken comments and tags, content after the root), then,
 * for some, a cut or one stray character added or removed.
 */
import fc from 'fast-check';

const pick = <T>(good: readonly T[], bad: readonly T[], dirty: boolean): fc.Arbitrary<T> =>
  dirty
    ? fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom(...good) },
        { weight: 1, arbitrary: fc.constantFrom(...bad) },
      )
    : fc.constantFrom(...good);

const ws = fc.constantFrom('', ' ', '\n', '\n  ', '\r\n\t', '  ');

const GOOD_TEXT = [
  'https://example.com/p/1',
  'a',
  ' ',
  '\n',
  'é',
  '😀',
  '>',
  ']]>',
  '&amp;',
  '&lt;',
  '&gt;',
  '&quot;',
  '&apos;',
  '&#233;',
  '&#xE9;',
  '&#X1F600;',
  '&#0065;',
  '?',
  '-',
  '--',
  '"',
  "'",
  '=',
];
const BAD_TEXT = [
  '&#x0;',
  '&#xD800;',
  '&#1114112;',
  '&#;',
  '&#x;',
  '&nbsp;',
  '&AMP;',
  '&Amp;',
  '& ',
  '&amp',
  '&a<',
  '&#65a;',
  '&#00000000000065;',
];
const GOOD_NAMES = [
  'url',
  'loc',
  'lastmod',
  'p:item',
  'image:image',
  'news:publication_date',
  'a.b-c_d',
  '_x',
  ':x',
  'x1',
  'q:unbound',
];
const BAD_NAMES = ['é', 'aé', 'a·b'];
const GOOD_ATTR_NAMES = ['a', 'b', 'id', 'xmlns', 'xmlns:p', 'xmlns:q', 'p:a', 'href', 'a1'];
const BAD_ATTR_NAMES = ['__proto__', 'constructor', 'hasOwnProperty', 'é', 'a'];
const GOOD_VALUES = [
  '1',
  'urn:test:other',
  'urn:test:root',
  '',
  'x&amp;y',
  'a<b',
  'a>b',
  '&#233;',
  "it's",
  'he said "hi"',
  'https://example.com/a/long/value/here',
];
const BAD_VALUES = ['&nbsp;', 'a&b', '&#0;'];
const GOOD_MISC = [
  '<!-- a comment -->',
  '<!---->',
  '<!--->-->',
  '<?pi body?>',
  '<??>',
  '<![CDATA[cdata <b> &amp; ]]]>',
  '<![CDATA[]]>',
];
const BAD_MISC = [
  '<!-- a -- b -->',
  '<!-- dash --->',
  '<?pi a??>?>',
  '<![cdata[lower]]>',
  '<!DOCTYPE x>',
  '<!ENTITY e "x">',
  '<!FOO bar>',
  '< a/>',
  '<a / >',
  '</ a>',
  '<a b>',
  '<a b=c>',
  '<a b="1"c="2"/>',
  '<a/ >',
  '<>',
  '<',
  '&',
  '</url>',
];

function parts(dirty: boolean) {
  const text = fc.array(pick(GOOD_TEXT, BAD_TEXT, dirty), { maxLength: 6 }).map((a) => a.join(''));
  const names = pick(GOOD_NAMES, BAD_NAMES, dirty);
  const attribute = fc
    .tuple(
      fc.constantFrom(' ', '\n', '  ', '\t'),
      pick(GOOD_ATTR_NAMES, BAD_ATTR_NAMES, dirty),
      fc.constantFrom('=', ' = ', '=\n'),
      fc.constantFrom('"', "'"),
      pick(GOOD_VALUES, BAD_VALUES, dirty),
    )
    .map(([sp, n, eq, q, v]) => {
      const value = q === '"' ? v.replaceAll('"', '&quot;') : v.replaceAll("'", '&apos;');
      return `${sp}${n}${eq}${q}${value}${q}`;
    });
  const misc = pick(GOOD_MISC, BAD_MISC, dirty);
  return { text, names, attribute, misc };
}

function element(p: ReturnType<typeof parts>, depth: number): fc.Arbitrary<string> {
  const leaf = fc
    .tuple(p.names, fc.array(p.attribute, { maxLength: 3 }), fc.boolean(), p.text, ws)
    .map(([n, attrs, selfClosing, t, sp]) =>
      selfClosing ? `<${n}${attrs.join('')}${sp}/>` : `<${n}${attrs.join('')}${sp}>${t}</${n}${sp}>`,
    );
  if (depth <= 0) return leaf;
  const content = fc.array(
    fc.oneof(
      { weight: 5, arbitrary: element(p, depth - 1) },
      { weight: 1, arbitrary: p.misc },
      { weight: 1, arbitrary: p.text },
      { weight: 2, arbitrary: ws },
    ),
    { maxLength: 5 },
  );
  return fc.oneof(
    { weight: 2, arbitrary: leaf },
    {
      weight: 3,
      arbitrary: fc
        .tuple(p.names, fc.array(p.attribute, { maxLength: 2 }), content, ws)
        .map(([n, attrs, c, sp]) => `<${n}${attrs.join('')}>${c.join('')}</${n}${sp}>`),
    },
  );
}

function whole(ns: string, dirty: boolean): fc.Arbitrary<string> {
  const p = parts(dirty);
  const prolog = fc
    .tuple(
      fc.constantFrom('', '\uFEFF'),
      fc.constantFrom('', '<?xml version="1.0" encoding="UTF-8"?>', "<?xml version='1.0'?>"),
      ws,
      fc.array(pick(['<!-- head -->', '<?pi?>', '<!---->', ' '], ['<!DOCTYPE urlset>', 'x'], dirty), {
        maxLength: 2,
      }),
    )
    .map(([bom, decl, sp, rest]) => `${bom}${decl}${sp}${rest.join('')}`);
  const root = pick(
    [`<doc xmlns="${ns}" xmlns:p="urn:test:other" xmlns:image="urn:image">`, `<doc xmlns="${ns}">`, '<any>'],
    ['<other xmlns="urn:nobody">', '<any/>'],
    dirty,
  );
  const tail = fc.array(
    pick(['\n', '<!-- end -->', '<?pi?>', '<!---->'], ['junk', '<doc/>', '</doc>', '&amp;'], dirty),
    {
      maxLength: 2,
    },
  );
  return fc
    .tuple(prolog, root, fc.array(fc.oneof(element(p, 2), p.misc, p.text, ws), { maxLength: 6 }), ws, tail)
    .map(([pro, r, body, sp, t]) => {
      if (r.endsWith('/>')) return `${pro}${r}${t.join('')}`;
      const name = r.slice(1, r.search(/[ >]/));
      return `${pro}${r}${body.join('')}${sp}</${name}>${t.join('')}`;
    });
}

/** A whole document: prolog, root (claimed or not), body, what follows; sometimes damaged. */
export function xmlDocument(ns: string): fc.Arbitrary<string> {
  const doc = fc.oneof({ weight: 3, arbitrary: whole(ns, false) }, { weight: 2, arbitrary: whole(ns, true) });
  return fc.oneof(
    { weight: 6, arbitrary: doc },
    { weight: 2, arbitrary: fc.tuple(doc, fc.nat()).map(([d, n]) => d.slice(0, n % (d.length + 1))) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          doc,
          fc.nat(),
          fc.constantFrom('<', '>', '&', '"', '/', '!', '-', ']', '?', ' ', 'x', '\u0000', 'é'),
        )
        .map(([d, n, c]) => {
          const at = n % (d.length + 1);
          return `${d.slice(0, at)}${c}${d.slice(at)}`;
        }),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(doc, fc.nat()).map(([d, n]) => {
        const at = n % (d.length + 1);
        return d.slice(0, at) + d.slice(at + 1);
      }),
    },
  );
}
