import { gzipSync } from 'node:zlib';
import type { DocumentLimits, ParsedDocument, Plugin, Registry } from '@usp-ts/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyEdits, editArbitrary } from './mutate.js';
import { shufflePrefixes } from './prefixes.js';
import {
  chunked,
  type DocumentSnapshot,
  type KitSample,
  parseChunks,
  registryOf,
  snapshot,
  toBytes,
} from './snapshot.js';

export type KitCheck =
  | 'samples'
  | 'arbitrary-bytes'
  | 'arbitrary-strings'
  | 'mutations'
  | 'chunking'
  | 'cuts'
  | 'gzip'
  | 'prefixes';

export interface FormatKitOptions {
  /** Shown in the suite name (the package name, usually). */
  name: string;
  /** The plugins under test, in registry order (a text format may need a fallback after it). */
  plugins: readonly Plugin[];
  /** Real documents of the format: the kit chunks, cuts, gzips and mutates them. */
  samples: readonly KitSample[];
  /** Limits for the arbitrary-input properties; small so the caps are reached. */
  fuzzLimits?: Partial<DocumentLimits>;
  /** Runs per property (default: `USP_FUZZ_RUNS`, else 100). */
  numRuns?: number;
  /** fast-check seed (default: `USP_FUZZ_SEED`, else a fixed one): failures reproduce. */
  seed?: number;
  /** Checks to leave out, each with a reason in the caller's code. */
  skip?: readonly KitCheck[];
}

export const DEFAULT_FUZZ_LIMITS: Readonly<DocumentLimits> = {
  maxPagesPerDocument: 25,
  maxChildrenPerIndex: 10,
  maxUrlLength: 300,
  maxDecompressedBytes: 64 * 1024,
  maxElementDepth: 24,
  maxTextLength: 4096,
};

const FIXED_SEED = 0x5eed;

/** Runs per property: `USP_FUZZ_RUNS` (the longer `pnpm fuzz` run) or the given default. */
export function fuzzRuns(fallback = 100): number {
  const env = Number(process.env.USP_FUZZ_RUNS);
  return Number.isFinite(env) && env > 0 ? Math.floor(env) : fallback;
}

function fuzzSeed(): number {
  const env = Number(process.env.USP_FUZZ_SEED);
  return Number.isFinite(env) ? env : FIXED_SEED;
}

/** A long run (`USP_FUZZ_RUNS` set) also tries every cut offset. */
function exhaustive(): boolean {
  return Number(process.env.USP_FUZZ_RUNS) > 0;
}

/**
 * Registers the shared properties every format and extension package must pass:
 * - arbitrary bytes, arbitrary strings and mutated samples never throw, never break a cap,
 *   never make a plugin fail;
 * - a document gives the same result in one chunk, in 1-byte chunks and in random chunkings;
 * - a document cut anywhere keeps exactly a prefix of the full page (and child) list;
 * - the gzipped document (once or twice) gives the same result;
 * - renaming namespace prefixes (XML samples) gives the same result.
 */
export function describeFormatKit(options: FormatKitOptions): void {
  const registry = registryOf(options.plugins);
  const runs = options.numRuns ?? fuzzRuns();
  const seed = options.seed ?? fuzzSeed();
  const limits: DocumentLimits = { ...DEFAULT_FUZZ_LIMITS, ...options.fuzzLimits };
  const skip = new Set(options.skip ?? []);
  const samples = options.samples;
  const urls = [...new Set(samples.map((s) => s.url))];
  const check = (name: KitCheck, title: string, fn: () => Promise<void>, timeout = 120_000) => {
    if (skip.has(name)) it.skip(title, fn);
    else it(title, fn, timeout);
  };

  describe(`format kit: ${options.name}`, () => {
    if (samples.length === 0) throw new Error('describeFormatKit needs at least one sample');

    check(
      'samples',
      'parses every sample without a plugin error, and reads something from them',
      async () => {
        let read = 0;
        for (const sample of samples) {
          const doc = await parseSample(registry, sample);
          expectSane(doc, null);
          read += snapshot(doc).pages.length + doc.children.length;
        }
        expect(read, 'the samples yield no page and no child: the kit would test nothing').toBeGreaterThan(0);
      },
    );

    check(
      'arbitrary-bytes',
      'never throws on arbitrary bytes (plain or gzipped) and keeps to the caps',
      async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.uint8Array({ maxLength: 2048 }),
            fc.constantFrom(...urls),
            fc.boolean(),
            async (bytes, url, gz) => {
              const body = gz ? new Uint8Array(gzipSync(bytes)) : bytes;
              const doc = await parseChunks(registry, [body], { url, limits });
              expectSane(doc, limits);
            },
          ),
          { seed, numRuns: runs },
        );
      },
    );

    check(
      'arbitrary-strings',
      'never throws on arbitrary and markup-like strings and keeps to the caps',
      async () => {
        // Built from integers: fast-check's 'binary' string unit is slow to set up.
        const anyCodeUnits = fc
          .array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 500 })
          .map((units) => String.fromCharCode(...units));
        const anyCodePoints = fc
          .array(fc.integer({ min: 0, max: 0x10ffff }), { maxLength: 300 })
          .map((points) => String.fromCodePoint(...points));
        const markup = fc
          .array(fc.oneof(fc.constantFrom(...MARKUP_PIECES), fc.string({ maxLength: 8 })), { maxLength: 60 })
          .map((parts) => parts.join(''));
        await fc.assert(
          fc.asyncProperty(
            fc.oneof(anyCodeUnits, anyCodePoints, markup),
            fc.constantFrom(...urls),
            async (text, url) => {
              const doc = await parseChunks(registry, [new TextEncoder().encode(text)], { url, limits });
              expectSane(doc, limits);
            },
          ),
          { seed, numRuns: runs },
        );
      },
    );

    check(
      'mutations',
      'never throws on mutated samples, keeps to the caps, and chunking changes nothing',
      async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.constantFrom(...samples),
            fc.array(editArbitrary(), { minLength: 1, maxLength: 6 }),
            fc.array(fc.nat(), { maxLength: 6 }),
            async (sample, edits, rawCuts) => {
              const bytes = applyEdits(toBytes(sample.input), edits);
              const opts = { url: sample.url, headers: sample.headers, limits };
              const whole = await parseChunks(registry, [bytes], opts);
              expectSane(whole, limits);
              const cuts = sortedCuts(rawCuts, bytes.length);
              const pieces = await parseChunks(registry, chunked(bytes, cuts), opts);
              expect(snapshot(pieces)).toEqual(snapshot(whole));
            },
          ),
          { seed, numRuns: runs },
        );
      },
    );

    check('chunking', 'gives the same result in one chunk, 1-byte chunks and random chunkings', async () => {
      for (const sample of samples) {
        const bytes = toBytes(sample.input);
        const whole = snapshot(await parseSample(registry, sample));
        const ones = Array.from({ length: bytes.length - 1 }, (_, i) => i + 1);
        expect(
          snapshot(await parseSample(registry, sample, chunked(bytes, ones))),
          `${sample.name}: 1-byte chunks`,
        ).toEqual(whole);
        await fc.assert(
          fc.asyncProperty(fc.array(fc.nat(), { maxLength: 20 }), async (rawCuts) => {
            const cuts = sortedCuts(rawCuts, bytes.length);
            expect(snapshot(await parseSample(registry, sample, chunked(bytes, cuts))), sample.name).toEqual(
              whole,
            );
          }),
          { seed, numRuns: Math.max(10, Math.floor(runs / 5)) },
        );
      }
    });

    check('cuts', 'keeps exactly a prefix of the entries when cut at any offset', async () => {
      for (const sample of samples) {
        const bytes = toBytes(sample.input);
        const full = snapshot(await parseSample(registry, sample));
        const xml = isXmlFormat(options.plugins, full.format);
        for (const at of cutOffsets(bytes.length, exhaustive())) {
          const part = bytes.subarray(0, at);
          // A connection reset: the parser knows the document broke off.
          const reset = snapshot(await parseSample(registry, sample, [part], new Error('connection reset')));
          expectPrefix(reset, full, `${sample.name} reset at ${at}`, true);
          expect(
            reset.warnings.some((w) => w.startsWith('plugin-error')),
            `${sample.name} reset at ${at}`,
          ).toBe(false);
          // A clean end: XML knows it is cut (unclosed root); text cannot tell a cut last line.
          const ended = snapshot(await parseSample(registry, sample, [part]));
          expectPrefix(ended, full, `${sample.name} ended at ${at}`, xml);
        }
      }
    });

    check(
      'gzip',
      'gives the same result gzipped (once, twice, in small chunks) and a prefix when cut',
      async () => {
        for (const sample of samples) {
          const bytes = toBytes(sample.input);
          const full = snapshot(await parseSample(registry, sample));
          const once = new Uint8Array(gzipSync(bytes));
          const twice = new Uint8Array(gzipSync(once));
          expect(snapshot(await parseSample(registry, sample, [once])), `${sample.name} gzipped`).toEqual(
            full,
          );
          expect(
            snapshot(await parseSample(registry, sample, [twice])),
            `${sample.name} gzipped twice`,
          ).toEqual(full);
          const small = chunked(
            once,
            Array.from({ length: Math.ceil(once.length / 7) }, (_, i) => (i + 1) * 7),
          );
          expect(
            snapshot(await parseSample(registry, sample, small)),
            `${sample.name} gzipped, 7-byte chunks`,
          ).toEqual(full);
          for (const at of cutOffsets(once.length, false).filter((_, i) => i % 4 === 0)) {
            const cut = snapshot(await parseSample(registry, sample, [once.subarray(0, at)]));
            expectPrefix(cut, full, `${sample.name} gzip cut at ${at}`, true);
          }
        }
      },
    );

    check('prefixes', 'gives the same result with namespace prefixes renamed (XML samples)', async () => {
      let tried = 0;
      for (const sample of samples) {
        if (typeof sample.input !== 'string') continue;
        const full = snapshot(await parseSample(registry, sample));
        if (!isXmlFormat(options.plugins, full.format)) continue;
        const input = sample.input;
        await fc.assert(
          fc.asyncProperty(fc.infiniteStream(fc.nat()), async (randoms) => {
            const it = randoms[Symbol.iterator]();
            const permute = <T>(items: T[]): T[] => {
              const a = [...items];
              for (let i = a.length - 1; i > 0; i--) {
                const j = (it.next().value as number) % (i + 1);
                [a[i], a[j]] = [a[j], a[i]];
              }
              return a;
            };
            const shuffled = shufflePrefixes(input, permute);
            if (shuffled === null) return;
            tried++;
            const got = snapshot(await parseSample(registry, { ...sample, input: shuffled }));
            expect(
              withoutPrefixWarnings(got),
              `${sample.name} with prefixes renamed:\n${shuffled.slice(0, 600)}`,
            ).toEqual(withoutPrefixWarnings(full));
          }),
          { seed, numRuns: Math.max(10, Math.floor(runs / 5)) },
        );
      }
      if (tried === 0) console.warn(`[format kit: ${options.name}] no XML sample with renamable prefixes`);
    });
  });
}

const MARKUP_PIECES = [
  '<',
  '>',
  '</',
  '/>',
  '<?xml version="1.0"?>',
  '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
  '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
  '<rss version="2.0"><channel>',
  '<feed xmlns="http://www.w3.org/2005/Atom">',
  '<url>',
  '</url>',
  '<loc>',
  '</loc>',
  '<item>',
  '<entry>',
  '<link href="http://example.com/a"/>',
  '<sitemap>',
  'http://example.com/',
  'Sitemap: ',
  '\n',
  '&amp;',
  '&',
  '<![CDATA[',
  ']]>',
  '<!--',
  '-->',
  '<!DOCTYPE',
  '"',
  '\0',
];

function parseSample(
  registry: Registry,
  sample: KitSample,
  chunks?: readonly Uint8Array[],
  breakWith?: Error,
): Promise<ParsedDocument> {
  return parseChunks(registry, chunks ?? [toBytes(sample.input)], {
    url: sample.url,
    ...(sample.headers !== undefined ? { headers: sample.headers } : {}),
    ...(breakWith !== undefined ? { breakWith } : {}),
  });
}

/** No plugin failed, and (when limits are given) no cap was passed. */
export function expectSane(doc: ParsedDocument, limits: DocumentLimits | null): void {
  const failures = doc.warnings.filter((w) => w.code === 'plugin-error');
  expect(failures, 'a plugin threw').toEqual([]);
  if (limits === null) return;
  const pages = 'pages' in doc.sitemap ? (doc.sitemap as { pages: { url: string }[] }).pages : [];
  expect(pages.length).toBeLessThanOrEqual(limits.maxPagesPerDocument);
  expect(doc.children.length).toBeLessThanOrEqual(limits.maxChildrenPerIndex);
  for (const p of pages) expect(p.url.length).toBeLessThanOrEqual(limits.maxUrlLength);
  for (const c of doc.children) expect(c.url.length).toBeLessThanOrEqual(limits.maxUrlLength);
  expect(doc.bytes).toBeLessThanOrEqual(limits.maxDecompressedBytes);
  // Warnings are bounded per code (100 plus one summary).
  const codes = new Set(doc.warnings.map((w) => w.code));
  expect(doc.warnings.length).toBeLessThanOrEqual(codes.size * 101);
}

/**
 * The entries of `part` are the first entries of `full`. When not `strict`, the last entry
 * may differ (a text line cut mid-URL looks complete).
 */
export function expectPrefix(
  part: DocumentSnapshot,
  full: DocumentSnapshot,
  label: string,
  strict: boolean,
): void {
  for (const key of ['pages', 'children'] as const) {
    const got = part[key] as unknown[];
    const want = full[key] as unknown[];
    const n = strict || got.length === 0 ? got.length : got.length - 1;
    expect(got.length, `${label}: more ${key} than the full document`).toBeLessThanOrEqual(want.length);
    expect(got.slice(0, n), `${label}: ${key} are not a prefix of the full document's`).toEqual(
      want.slice(0, n),
    );
  }
}

function isXmlFormat(plugins: readonly Plugin[], format: string | null): boolean {
  return plugins.some((p) => p.name === format && p.kind === 'xml');
}

function sortedCuts(raw: readonly number[], length: number): number[] {
  if (length < 2) return [];
  return [...new Set(raw.map((r) => 1 + (r % (length - 1))))].sort((a, b) => a - b);
}

/** Cut points: every offset for short documents (or a long run), else a spread of them. */
export function cutOffsets(length: number, all: boolean): number[] {
  if (all || length <= 160) return Array.from({ length }, (_, i) => i);
  const out = new Set<number>();
  for (let i = 0; i < 40; i++) out.add(i);
  for (let i = 0; i < 120; i++) out.add(Math.floor((i * length) / 120));
  for (let i = 1; i <= 20; i++) out.add(length - i);
  return [...out].filter((o) => o >= 0 && o < length).sort((a, b) => a - b);
}

function withoutPrefixWarnings(s: DocumentSnapshot): DocumentSnapshot {
  // Messages may quote an element as written (with its prefix); the codes must still match.
  return { ...s, warnings: s.warnings.map((w) => w.slice(0, w.indexOf(':'))) };
}
