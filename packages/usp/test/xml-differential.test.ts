/**
 * The XML fast path against sax, through the whole document pipeline (gzip, decoding, every
 * format and extension of the default registry): every document of the conformance corpus and
 * random sitemaps (urlsets with images, news, video and alternates, indexes), well-formed and
 * broken, fed in random byte pieces, give the same pages, fields, children, warnings and result
 * with `xmlTokenizer: 'auto'` as with `'sax'` (issue 37). The hostile set runs both too
 * (hostile/documents.test.ts); the bench runs its generated sites and many seeds
 * (`bench/src/differential.mjs`).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { casesDir, hasCorpus, missingCorpusMessage } from '@usp-ts/conformance';
import { type ParsedSitemap, parseSitemap, sitemapToJSON } from '@usp-ts/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createDefaultRegistry } from '../src/index.js';
import { sitemapDocument } from './xml-sitemaps.js';

const runs = (fallback: number): number => Number(process.env.USP_FUZZ_RUNS) || fallback;
const seed = Number(process.env.USP_FUZZ_SEED) || 37;
const registry = createDefaultRegistry();

async function* inPieces(bytes: Uint8Array, cuts: readonly number[]): AsyncGenerator<Uint8Array> {
  let from = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    if (cut <= from || cut >= bytes.length) continue;
    yield bytes.subarray(from, cut);
    from = cut;
  }
  yield bytes.subarray(from);
}

async function parse(url: string, bytes: Uint8Array, cuts: readonly number[], tokenizer: 'auto' | 'sax') {
  const doc: ParsedSitemap = await parseSitemap({
    url,
    body: inPieces(bytes, cuts),
    registry,
    xmlTokenizer: tokenizer,
  });
  const { sitemap, ...rest } = doc;
  const pages = 'pages' in sitemap ? (sitemap as { pages: unknown[] }).pages : null;
  return { ...rest, node: sitemapToJSON(sitemap), pages };
}

/** Parses `bytes` in `cuts` pieces both ways and compares everything. */
export async function expectSameBothWays(url: string, bytes: Uint8Array, cuts: readonly number[] = []) {
  const sax = await parse(url, bytes, cuts, 'sax');
  const fast = await parse(url, bytes, cuts, 'auto');
  expect(fast).toEqual(sax);
  return sax;
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else if (!name.endsWith('.json') || dir.endsWith('site')) out.push(path);
  }
  return out;
}

describe('xml fast path: the same result as sax', () => {
  it('on every document of the conformance corpus, whole and in pieces', async () => {
    expect(hasCorpus(), missingCorpusMessage()).toBe(true);
    const files = filesUnder(casesDir()).filter((f) => !/expected[^/]*\.json$|case\.json$/.test(f));
    expect(files.length).toBeGreaterThan(100);
    for (const file of files) {
      const bytes = new Uint8Array(readFileSync(file));
      const url = `https://example.com/${file.slice(casesDir().length + 1)}`;
      await expectSameBothWays(url, bytes);
      await expectSameBothWays(url, bytes, [1, 7, 100, Math.floor(bytes.length / 2), bytes.length - 3]);
    }
  });

  it('on random sitemaps, well-formed and broken, gzipped or not, in random byte pieces', async () => {
    await fc.assert(
      fc.asyncProperty(
        sitemapDocument(),
        fc.boolean(),
        fc.array(fc.nat({ max: 4000 }), { maxLength: 12 }),
        async (doc, gzip, cuts) => {
          const bytes = gzip ? new Uint8Array(gzipSync(doc)) : new TextEncoder().encode(doc);
          await expectSameBothWays('https://example.com/sitemap.xml', bytes, cuts);
        },
      ),
      { seed, numRuns: runs(300) },
    );
  });
});
