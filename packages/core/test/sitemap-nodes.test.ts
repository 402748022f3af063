import { describe, expect, it } from 'vitest';
import {
  IndexRobotsTxtSitemap,
  IndexWebsiteSitemap,
  IndexXMLSitemap,
  InvalidSitemap,
  PagesAtomSitemap,
  PagesRSSSitemap,
  PagesTextSitemap,
  PagesXMLSitemap,
} from '../src/index.js';

// The node classes set their fields in their constructors (no class fields): what a node holds,
// in which order (JSON output, `Object.keys`), and that each is a plain writable data property,
// stay as the class fields made them.
describe('sitemap node fields', () => {
  const init = { url: 'http://example.com/s.xml', reason: 'r' };
  const cases: [string, object, string[]][] = [
    [
      'IndexWebsiteSitemap',
      new IndexWebsiteSitemap(init),
      ['url', 'lastModified', 'warnings', 'subSitemaps', 'type', 'summary'],
    ],
    [
      'IndexRobotsTxtSitemap',
      new IndexRobotsTxtSitemap(init),
      ['url', 'lastModified', 'warnings', 'subSitemaps', 'type', 'robots', 'entries'],
    ],
    [
      'IndexXMLSitemap',
      new IndexXMLSitemap(init),
      ['url', 'lastModified', 'warnings', 'subSitemaps', 'type', 'entries'],
    ],
    ['PagesXMLSitemap', new PagesXMLSitemap(init), ['url', 'lastModified', 'warnings', 'type']],
    ['PagesTextSitemap', new PagesTextSitemap(init), ['url', 'lastModified', 'warnings', 'type']],
    ['PagesRSSSitemap', new PagesRSSSitemap(init), ['url', 'lastModified', 'warnings', 'type']],
    ['PagesAtomSitemap', new PagesAtomSitemap(init), ['url', 'lastModified', 'warnings', 'type']],
    ['InvalidSitemap', new InvalidSitemap(init), ['url', 'lastModified', 'warnings', 'type', 'reason']],
  ];
  for (const [name, node, keys] of cases) {
    it(`${name}: its own keys in order, each a writable enumerable data property`, () => {
      expect(Object.keys(node)).toEqual(keys);
      expect((node as { type: string }).type).toBe(name);
      for (const d of Object.values(Object.getOwnPropertyDescriptors(node))) {
        expect(d).toMatchObject({ writable: true, enumerable: true, configurable: true });
      }
    });
  }

  it('pages nodes keep their pages behind the accessor, not as own properties', () => {
    const node = new PagesXMLSitemap({ ...init, pages: [{ url: 'http://example.com/a' } as never] });
    expect(node.pageCount).toBe(1);
    expect(Object.hasOwn(node, 'pages')).toBe(false);
  });
});
