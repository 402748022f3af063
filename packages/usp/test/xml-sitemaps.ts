/**
 * Random sitemaps for the differential tests: urlsets whose entries carry what the formats and
 * extensions read (dates in the forms found in the wild, images, news, video, alternates),
 * indexes, and a share of the damage sitemaps show (HTML entities, a bare `&`, cut documents,
 * a stray character, non-ASCII element names, a DOCTYPE).
 */
import fc from 'fast-check';

const NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';
const HEAD = `<urlset xmlns="${NS}" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9" xmlns:video="http://www.google.com/schemas/sitemap-video/1.1" xmlns:xhtml="http://www.w3.org/1999/xhtml">`;

const url = fc
  .tuple(
    fc.constantFrom('https://example.com/', 'http://www.example.org/a/', '/relative/', 'https://ex.com/ü/'),
    fc.nat(999),
    fc.constantFrom('', '?a=1&amp;b=2', '#x', '&amp;', ' ', '&nbsp;', '&#233;', '&b=2'),
  )
  .map(([base, n, tail]) => `${base}p${n}${tail}`);
const date = fc.constantFrom(
  '2024-01-02',
  '2024-01-02T03:04:05Z',
  '2024-01-02T03:04:05+02:00',
  '2024-01-02T03:04:05.123456-07:30',
  '2024-01',
  '2024',
  '2024-13-45',
  'yesterday',
  ' 2024-01-02 ',
  'Tue, 02 Jan 2024 03:04:05 GMT',
  '',
);
const ws = fc.constantFrom('', '\n', '\n  ', ' ');
const optional = (a: fc.Arbitrary<string>) => fc.option(a, { nil: '' });

const entry = fc
  .tuple(
    url,
    optional(date.map((d) => `<lastmod>${d}</lastmod>`)),
    optional(
      fc.constantFrom('daily', 'weekly', 'Always', 'bogus').map((c) => `<changefreq>${c}</changefreq>`),
    ),
    optional(fc.constantFrom('0.5', '1.0', '2', 'x', '0.80').map((p) => `<priority>${p}</priority>`)),
    optional(
      fc
        .tuple(url, fc.constantFrom('A caption', 'Caf&#233; &amp; bar', '<![CDATA[Title <b>]]>'))
        .map(
          ([u, c]) =>
            `<image:image><image:loc>${u}</image:loc><image:caption>${c}</image:caption></image:image>`,
        ),
    ),
    optional(
      fc
        .tuple(date, fc.constantFrom('News title', 'T&apos;s &quot;quoted&quot;'))
        .map(
          ([d, t]) =>
            `<news:news><news:publication><news:name>Paper</news:name><news:language>en</news:language></news:publication><news:publication_date>${d}</news:publication_date><news:title>${t}</news:title><news:keywords>a, b</news:keywords></news:news>`,
        ),
    ),
    optional(
      url.map(
        (u) =>
          `<video:video><video:thumbnail_loc>${u}</video:thumbnail_loc><video:title>V</video:title><video:description>D</video:description><video:content_loc>${u}</video:content_loc><video:duration>60</video:duration></video:video>`,
      ),
    ),
    optional(url.map((u) => `<xhtml:link rel="alternate" hreflang="de" href="${u}"/>`)),
    ws,
  )
  .map(([u, ...rest]) => {
    const sp = rest[rest.length - 1] as string;
    return `<url>${sp}<loc>${u}</loc>${rest.slice(0, -1).join(sp)}${sp}</url>${sp}`;
  });

const urlset = fc
  .tuple(fc.constantFrom('', '<?xml version="1.0" encoding="UTF-8"?>\n'), fc.array(entry, { maxLength: 12 }))
  .map(([decl, entries]) => `${decl}${HEAD}\n${entries.join('')}</urlset>\n`);

const index = fc
  .array(fc.tuple(url, optional(date)), { maxLength: 6 })
  .map(
    (children) =>
      `<?xml version="1.0"?><sitemapindex xmlns="${NS}">${children
        .map(([u, d]) => `<sitemap><loc>${u}</loc>${d === '' ? '' : `<lastmod>${d}</lastmod>`}</sitemap>`)
        .join('\n')}</sitemapindex>`,
  );

const damage = fc.constantFrom(
  '<',
  '>',
  '&',
  '"',
  '/',
  '!',
  ']',
  '?',
  'x',
  'é',
  '<!DOCTYPE x>',
  '<é>',
  '</url>',
  '<!---->',
  '<?pi?>',
);

/** A sitemap document: most well-formed, some cut, some with one stray piece added or removed. */
export function sitemapDocument(): fc.Arbitrary<string> {
  const doc = fc.oneof({ weight: 4, arbitrary: urlset }, { weight: 1, arbitrary: index });
  return fc.oneof(
    { weight: 5, arbitrary: doc },
    { weight: 2, arbitrary: fc.tuple(doc, fc.nat()).map(([d, n]) => d.slice(0, n % (d.length + 1))) },
    {
      weight: 2,
      arbitrary: fc.tuple(doc, fc.nat(), damage).map(([d, n, c]) => {
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
