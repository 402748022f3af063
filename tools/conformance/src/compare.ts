import type { SitemapJSON } from '@usp-ts/core';
import { type CorpusAlternates, type CorpusNode, toAlternatesForm, toCorpusForm } from './corpus-form.js';

export interface CompareOptions {
  /**
   * A site case: the root `IndexWebsiteSitemap`'s children after the robots.txt child are compared
   * as an unordered multiset (README 2.1 item 4; never wrong for usp, so use it for every site case).
   */
  siteCase?: boolean;
  /** The test server's port: `127.0.0.1:<port>` in the actual tree becomes `127.0.0.1:PORT` (README 2.2). */
  port?: number;
  /** `depends_on_current_date` cases: date fields are not compared (README 2.1 item 5). */
  ignoreDates?: boolean;
  /** `expected_alternates.json`, compared exactly against the actual pages' alternates (README 2.3). */
  expectedAlternates?: CorpusAlternates | null;
}

export interface Difference {
  /** JSON-path-like location: `$.sub_sitemaps[1].pages[0].news_story.title`. */
  path: string;
  message: string;
}

export interface CompareResult {
  ok: boolean;
  differences: Difference[];
}

const DATE_KEYS = new Set(['last_modified', 'publish_date']);

interface Ctx {
  ignoreDates: boolean;
  out: Difference[];
}

/**
 * Compares a tree with a golden as the corpus README section 2.1 prescribes: `reason` loosely
 * (a non-empty string), numbers numerically, dates by instant (both with offset) or wall clock
 * (both without), lists in order (except a site root's known-path children), keys the golden
 * does not have ignored, everything else exactly. `actual` may be in the project's JSON form
 * (it is mapped with `toCorpusForm`) or already in corpus form.
 */
export function compareToGolden(
  actual: SitemapJSON | CorpusNode,
  expected: CorpusNode,
  options: CompareOptions = {},
): CompareResult {
  let tree = toCorpusForm(actual);
  if (options.port !== undefined) tree = withPortPlaceholder(tree, options.port);
  const ctx: Ctx = { ignoreDates: options.ignoreDates ?? false, out: [] };
  if (options.siteCase === true && expected.type === 'IndexWebsiteSitemap') {
    compareSiteRoot(tree, expected, ctx);
  } else {
    compareValue('$', tree, expected, undefined, ctx);
  }
  if (options.expectedAlternates !== undefined && options.expectedAlternates !== null) {
    compareValue('$alternates', toAlternatesForm(tree), options.expectedAlternates, undefined, ctx);
  }
  return { ok: ctx.out.length === 0, differences: ctx.out };
}

/** One line per difference, for assertion messages. */
export function formatDifferences(result: CompareResult, max = 20): string {
  const lines = result.differences.slice(0, max).map((d) => `${d.path}: ${d.message}`);
  if (result.differences.length > max) lines.push(`... and ${result.differences.length - max} more`);
  return lines.join('\n');
}

/** Replaces `127.0.0.1:<port>` with `127.0.0.1:PORT` in every string of a value. */
export function withPortPlaceholder<T>(value: T, port: number): T {
  const needle = `127.0.0.1:${port}`;
  const map = (v: unknown): unknown => {
    if (typeof v === 'string') return v.split(needle).join('127.0.0.1:PORT');
    if (Array.isArray(v)) return v.map(map);
    if (v !== null && typeof v === 'object') {
      const o: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) o[k] = map(x);
      return o;
    }
    return v;
  };
  return map(value) as T;
}

function show(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 200 ? `${s.slice(0, 200)}...` : s;
}

function compareValue(path: string, a: unknown, e: unknown, key: string | undefined, ctx: Ctx): void {
  if (key === 'reason' && typeof e === 'string') {
    // usp's reasons embed Python texts (set reprs, exception messages): only presence counts.
    if (typeof a !== 'string' || a.trim() === '')
      ctx.out.push({ path, message: `expected a non-empty reason, got ${show(a)}` });
    return;
  }
  if (key !== undefined && DATE_KEYS.has(key)) {
    if (ctx.ignoreDates) return;
    if (typeof e === 'string' && e !== '' && typeof a === 'string') {
      if (!datesEqual(a, e)) ctx.out.push({ path, message: `date ${show(a)} is not ${show(e)}` });
      return;
    }
  }
  if (typeof e === 'number') {
    if (typeof a !== 'number' || a !== e)
      ctx.out.push({ path, message: `expected number ${e}, got ${show(a)}` });
    return;
  }
  if (Array.isArray(e)) {
    if (!Array.isArray(a)) {
      ctx.out.push({ path, message: `expected a list of ${e.length}, got ${show(a)}` });
      return;
    }
    if (a.length !== e.length) ctx.out.push({ path, message: `expected ${e.length} items, got ${a.length}` });
    const n = Math.min(a.length, e.length);
    for (let i = 0; i < n; i++) compareValue(`${path}[${i}]`, a[i], e[i], undefined, ctx);
    return;
  }
  if (e !== null && typeof e === 'object') {
    if (a === null || typeof a !== 'object' || Array.isArray(a)) {
      ctx.out.push({ path, message: `expected an object, got ${show(a)}` });
      return;
    }
    const ao = a as Record<string, unknown>;
    for (const [k, ev] of Object.entries(e)) {
      if (!(k in ao)) {
        ctx.out.push({ path: `${path}.${k}`, message: `missing (expected ${show(ev)})` });
        continue;
      }
      compareValue(`${path}.${k}`, ao[k], ev, k, ctx);
    }
    return;
  }
  if (a !== e) ctx.out.push({ path, message: `expected ${show(e)}, got ${show(a)}` });
}

function compareSiteRoot(a: CorpusNode, e: CorpusNode, ctx: Ctx): void {
  const { sub_sitemaps: eSubs = [], ...eRest } = e;
  const { sub_sitemaps: aSubs, ...aRest } = a;
  compareValue('$', aRest, eRest, undefined, ctx);
  if (aSubs === undefined) {
    ctx.out.push({ path: '$.sub_sitemaps', message: 'missing' });
    return;
  }
  let eList = eSubs;
  let aList = aSubs;
  if (eSubs[0]?.type === 'IndexRobotsTxtSitemap') {
    // The robots.txt child is always first; only the known-path children are unordered.
    if (aSubs.length === 0) ctx.out.push({ path: '$.sub_sitemaps[0]', message: 'missing robots.txt child' });
    else compareValue('$.sub_sitemaps[0]', aSubs[0], eSubs[0], undefined, ctx);
    eList = eSubs.slice(1);
    aList = aSubs.slice(1);
  }
  const offset = eSubs.length - eList.length;
  const used = new Set<number>();
  const unmatched: number[] = [];
  eList.forEach((ec, ei) => {
    const found = aList.findIndex((ac, ai) => !used.has(ai) && diffsOf(ac, ec, ctx.ignoreDates).length === 0);
    if (found >= 0) used.add(found);
    else unmatched.push(ei);
  });
  for (const ei of unmatched) {
    const ec = eList[ei];
    const path = `$.sub_sitemaps{${ec.type} ${ec.url}}`;
    // Point at the closest candidate (same type and URL) so the message says what differs.
    const near = aList.findIndex((ac, ai) => !used.has(ai) && ac.type === ec.type && ac.url === ec.url);
    if (near >= 0) {
      used.add(near);
      for (const d of diffsOf(aList[near], ec, ctx.ignoreDates))
        ctx.out.push({ path: path + d.path.slice(1), message: d.message });
    } else {
      ctx.out.push({
        path,
        message: `expected known-path child (index ${ei + offset} in the golden) not found`,
      });
    }
  }
  aList.forEach((ac, ai) => {
    if (!used.has(ai))
      ctx.out.push({ path: `$.sub_sitemaps{${ac.type} ${ac.url}}`, message: 'unexpected child' });
  });
}

function diffsOf(a: unknown, e: unknown, ignoreDates: boolean): Difference[] {
  const ctx: Ctx = { ignoreDates, out: [] };
  compareValue('$', a, e, undefined, ctx);
  return ctx.out;
}

const ISO =
  /^([+-]?\d{4,6})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(Z|[+-]\d{2}(?::?\d{2}(?::?\d{2}(?:\.\d+)?)?)?)?$/i;

interface ParsedIso {
  /** Wall-clock time in microseconds since the epoch, read as UTC. */
  wallUs: number;
  /** Offset in seconds, `null` when the string has none. */
  offsetS: number | null;
}

/** Parses an ISO 8601 date-time as Python's `isoformat()` and core's `toISOString()` write them. */
export function parseIsoForComparison(s: string): ParsedIso | null {
  const m = ISO.exec(s);
  if (m === null) return null;
  const [, y, mo, d, h, mi, sec, frac, off] = m;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec ?? 0));
  if (Number.isNaN(ms)) return null;
  const micros = frac === undefined ? 0 : Number(frac.slice(0, 6).padEnd(6, '0'));
  let offsetS: number | null = null;
  if (off !== undefined) {
    if (off.toUpperCase() === 'Z') offsetS = 0;
    else {
      const sign = off[0] === '-' ? -1 : 1;
      const digits = off.slice(1).replace(/:/g, '');
      const oh = Number(digits.slice(0, 2));
      const om = Number(digits.slice(2, 4) || 0);
      const os = Number(digits.slice(4, 6) || 0);
      offsetS = sign * (oh * 3600 + om * 60 + os);
    }
  }
  return { wallUs: ms * 1000 + micros, offsetS };
}

/**
 * README section 8: equal when both carry an offset and give the same instant, or both carry none
 * and show the same wall-clock time. Strings that are not ISO dates compare exactly.
 */
export function datesEqual(a: string, e: string): boolean {
  const pa = parseIsoForComparison(a);
  const pe = parseIsoForComparison(e);
  if (pa === null || pe === null) return a === e;
  if (pa.offsetS === null || pe.offsetS === null) return pa.offsetS === pe.offsetS && pa.wallUs === pe.wallUs;
  return pa.wallUs - pa.offsetS * 1e6 === pe.wallUs - pe.offsetS * 1e6;
}
