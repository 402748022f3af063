// Pages across threads. Structured clone keeps plain data but drops prototypes (a SitemapDate
// arrives as a plain object), so pages travel in a columnar form and are rebuilt on the other side.
// A batch of ordinary pages also carries the temp-file store's records of them, made on the
// worker, which reach the store as the batch's `EncodedPages`: it copies them instead of
// encoding every page again on the main thread.
import { CHANGE_FREQUENCIES, type ChangeFrequency, type Page, SitemapDate } from '@usp-ts/core/parse';
import { RecordBuffer } from './records.js';

const DATE_TAG = '__uspSitemapDate';
const NO_OFFSET = -2_147_483_648;
const FREQ_INDEX = new Map<string, number>(CHANGE_FREQUENCIES.map((f, i) => [f, i + 1]));

/** @internal */
export interface PageBatch {
  n: number;
  urls: string[];
  priority: Float64Array;
  /** Epoch ms; NaN for no date. */
  lastmod: Float64Array;
  offset: Int32Array;
  micros: Uint16Array;
  /** 0: null, 1-7: CHANGE_FREQUENCIES; 255: see `extra`. */
  freq: Uint8Array;
  /** `[index, data, index, data, ...]` for pages with news, images, alternates, extensions. */
  extra: unknown[] | null;
  /**
   * The pages as records.ts's plain records, back to back (its own buffer, to transfer);
   * null when a page is not an ordinary one.
   */
  records: Uint8Array | null;
}

/** @internal Replaces every SitemapDate inside plain data by a tagged tuple. */
export function tagDates(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (v instanceof SitemapDate) return { [DATE_TAG]: [v.epochMs, v.offsetMinutes, v.microseconds] };
  if (Array.isArray(v)) return v.map(tagDates);
  const o: Record<string, unknown> = {};
  for (const k of Object.keys(v)) o[k] = tagDates((v as Record<string, unknown>)[k]);
  return o;
}

/** @internal The inverse of {@link tagDates}. */
export function reviveDates(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(reviveDates);
  const t = (v as Record<string, unknown>)[DATE_TAG] as [number, number | null, number] | undefined;
  if (t !== undefined) return new SitemapDate(t[0], t[1], t[2]);
  const o: Record<string, unknown> = {};
  for (const k of Object.keys(v)) o[k] = reviveDates((v as Record<string, unknown>)[k]);
  return o;
}

/**
 * @internal `scratch` is where the records are made (reused batch after batch by a worker, so it
 * grows once); the batch gets a copy of its size.
 */
export function encodePages(pages: readonly Page[], scratch = new RecordBuffer(4096)): PageBatch {
  const n = pages.length;
  const b: PageBatch = {
    n,
    urls: new Array<string>(n),
    priority: new Float64Array(n),
    lastmod: new Float64Array(n),
    offset: new Int32Array(n),
    micros: new Uint16Array(n),
    freq: new Uint8Array(n),
    extra: null,
    records: null,
  };
  let plain = true;
  for (let i = 0; i < n; i++) {
    const p = pages[i];
    if (plain) plain = scratch.appendPlain(p);
    b.urls[i] = p.url;
    b.priority[i] = p.priority;
    const d = p.lastModified;
    if (d === null) b.lastmod[i] = Number.NaN;
    else {
      b.lastmod[i] = d.epochMs;
      b.offset[i] = d.offsetMinutes ?? NO_OFFSET;
      b.micros[i] = d.microseconds;
    }
    let odd: ChangeFrequency | null = null;
    if (p.changeFrequency !== null) {
      const f = FREQ_INDEX.get(p.changeFrequency);
      if (f === undefined) {
        b.freq[i] = 255;
        odd = p.changeFrequency;
      } else b.freq[i] = f;
    }
    if (
      p.newsStory !== null ||
      p.images !== null ||
      p.alternates !== null ||
      p.extensions !== undefined ||
      odd
    ) {
      b.extra ??= [];
      b.extra.push(
        i,
        tagDates({
          newsStory: p.newsStory,
          images: p.images,
          alternates: p.alternates,
          extensions: p.extensions,
          changeFrequency: odd,
        }),
      );
    }
  }
  const records = scratch.take();
  if (plain) b.records = new Uint8Array(records);
  return b;
}

/**
 * @internal The plain records of `pages` (a copy of their size, to transfer) if every page is
 * an ordinary one, else null: a batch for a consumer that needs only the records.
 */
export function encodeRecords(pages: readonly Page[], scratch: RecordBuffer): Uint8Array | null {
  for (const p of pages) {
    if (!scratch.appendPlain(p)) {
      scratch.take();
      return null;
    }
  }
  return new Uint8Array(scratch.take());
}

/** @internal */
export function decodePages(b: PageBatch): Page[] {
  const pages = new Array<Page>(b.n);
  for (let i = 0; i < b.n; i++) {
    const ms = b.lastmod[i];
    const f = b.freq[i];
    pages[i] = {
      url: b.urls[i],
      priority: b.priority[i],
      lastModified: Number.isNaN(ms)
        ? null
        : new SitemapDate(ms, b.offset[i] === NO_OFFSET ? null : b.offset[i], b.micros[i]),
      changeFrequency: f === 0 || f === 255 ? null : CHANGE_FREQUENCIES[f - 1],
      newsStory: null,
      images: null,
      alternates: null,
    };
  }
  const extra = b.extra;
  if (extra !== null) {
    for (let k = 0; k < extra.length; k += 2) {
      const i = extra[k] as number;
      const x = reviveDates(extra[k + 1]) as Page & { changeFrequency: ChangeFrequency | null };
      const p = pages[i] as { -readonly [K in keyof Page]: Page[K] };
      p.newsStory = x.newsStory ?? null;
      p.images = x.images ?? null;
      p.alternates = x.alternates ?? null;
      if (x.changeFrequency) p.changeFrequency = x.changeFrequency;
      if (x.extensions !== undefined) p.extensions = x.extensions;
    }
  }
  return pages;
}
