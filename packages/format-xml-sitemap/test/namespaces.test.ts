import { describe, expect, it } from 'vitest';
import { isOwnNamespace, SITEMAP_NAMESPACE } from '../src/namespaces.js';

describe('isOwnNamespace', () => {
  const other = 'https://www.sitemaps.org/schemas/sitemap/0.9/';
  it("takes the root's namespace, none, and every sitemaps.org spelling as the document's own", () => {
    expect(isOwnNamespace(SITEMAP_NAMESPACE, SITEMAP_NAMESPACE)).toBe(true);
    expect(isOwnNamespace('', SITEMAP_NAMESPACE)).toBe(true);
    expect(isOwnNamespace(other, SITEMAP_NAMESPACE)).toBe(true);
    expect(isOwnNamespace('urn:odd-root', 'urn:odd-root')).toBe(true);
  });

  it("leaves an extension's namespace to the extension", () => {
    expect(isOwnNamespace('http://www.google.com/schemas/sitemap-image/1.1', SITEMAP_NAMESPACE)).toBe(false);
    expect(isOwnNamespace('http://www.w3.org/1999/xhtml', SITEMAP_NAMESPACE)).toBe(false);
  });
});
