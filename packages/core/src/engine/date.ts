import type { DateTime } from 'luxon';
import { SitemapDate } from '../contract/sitemap-date.js';
import { isAsciiDigit } from './ascii.js';
import { isPythonSpace } from './lines.js';
import { luxonDateTime } from './luxon-module.cjs';

/**
 * `<lastmod>`, `<news:publication_date>`, Atom dates: W3C/ISO 8601 on a hand-written fast
 * path, then the looser forms sitemaps carry in the wild. `null` when unparseable.
 * Deterministic: never fills missing fields from "today" (`2024` is 2024-01-01, `2024-05`
 * is 2024-05-01, a bare time is `null`).
 */
export function parseIsoDate(text: string): SitemapDate | null {
  if (typeof text !== 'string') return null;
  // The common shapes first, without the general parser's frame around them.
  const common = commonW3cDate(text);
  if (common !== undefined) return common;
  const fast = generalW3cDate(text);
  if (fast !== NOT_W3C) return fast;
  return parseLooseDate(text);
}

/**
 * {@link parseIsoDate} for code that reads few dates and reads them once (a Google News sitemap
 * holds at most 1,000 stories): the common W3C shapes by one regex that checks every field's
 * range and `Date.parse`, native code from the first call, then parseIsoDate for anything else.
 * Same results. It costs about a fifth of parseIsoDate while V8 runs that interpreted (1,000 dates
 * in a fresh process: ~1.1 against ~5.6 ms of CPU) and twice as much once it is optimised (~270
 * against ~120 ns a date), so a large document's dates stay with parseIsoDate (issue 37).
 */
export function parseIsoDateCold(text: string): SitemapDate | null {
  if (typeof text !== 'string') return null;
  return nativeCommonDate(text) ?? parseIsoDate(text);
}

/**
 * RSS `<pubDate>`: RFC 2822 / RFC 1123 (`Thu, 17 Dec 2009 12:04:56 +0200`, with the RFC 822
 * and common zone abbreviations mapped to their offsets), then the ISO forms. `null` when unparseable.
 */
export function parseRfc2822Date(text: string): SitemapDate | null {
  // The fast path fails on the first character of `Thu, ...`, and feeds often use ISO dates:
  // the two paths read disjoint forms, so the order only matters for speed.
  return parseIsoDate(text);
}

// ---------------------------------------------------------------------------------------------
// Fast path: W3C datetime / ISO 8601, parsed by hand over char codes. It runs once per page on
// large sitemaps, so it allocates nothing but the result and compiles no regex.

/** The text is not in a form the fast path knows (as opposed to `null`: known form, impossible value). */
const NOT_W3C = undefined;

const MS_PER_DAY = 86_400_000;
// Offsets past ±23:59 do not exist; Python accepts them only to fail later (usp's `+25:00` row).
const MAX_OFFSET_MINUTES = 23 * 60 + 59;

/**
 * Parses `YYYY`, `YYYY-MM`, `YYYY-MM-DD`, `YYYYMMDD`, `YYYY-Www[-D]`, `YYYY-DDD`, optionally
 * followed by `T` (or a space) and `hh[:mm[:ss[.f]]]` / `hhmm[ss[.f]]`, optionally followed by
 * `Z` / `±hh[:mm]` / `±hhmm` (one space allowed before the zone). Surrounding whitespace is ignored.
 * Returns `NOT_W3C` for anything else, `null` for an impossible value (`2023-02-29`, `24:00`).
 */
export function parseW3cDate(s: string): SitemapDate | null | typeof NOT_W3C {
  return commonW3cDate(s) ?? generalW3cDate(s);
}

/**
 * {@link parseW3cDate} for text that `commonW3cDate` has already turned down (exported for the
 * test that holds the two to the same results).
 */
export function generalW3cDate(s: string): SitemapDate | null | typeof NOT_W3C {
  let end = s.length;
  let i = 0;
  while (i < end && s.charCodeAt(i) <= 32) i++;
  while (end > i && s.charCodeAt(end - 1) <= 32) end--;
  if (end - i < 4) return NOT_W3C;

  const year = digits(s, i, 4);
  if (year < 0) return NOT_W3C;
  i += 4;

  let days: number;
  let c = i < end ? s.charCodeAt(i) : -1;
  if (c === -1) {
    if (year === 0) return null;
    return new SitemapDate(daysFromCivil(year, 1, 1) * MS_PER_DAY, null);
  }
  if (c === 0x2d /* - */) {
    i++;
    c = i < end ? s.charCodeAt(i) : -1;
    if (c === 0x57 /* W */) {
      const w = parseWeek(s, i + 1, end, true, year);
      if (w === NOT_W3C || w === null) return w;
      days = w.days;
      i = w.next;
    } else {
      const run = digitRun(s, i, end);
      if (run === 2) {
        const month = digits(s, i, 2);
        i += 2;
        if (i === end) {
          if (year === 0 || month < 1 || month > 12) return null;
          return new SitemapDate(daysFromCivil(year, month, 1) * MS_PER_DAY, null);
        }
        if (s.charCodeAt(i) !== 0x2d || digitRun(s, i + 1, end) !== 2) return NOT_W3C;
        const day = digits(s, i + 1, 2);
        i += 3;
        if (!validDate(year, month, day)) return null;
        days = daysFromCivil(year, month, day);
      } else if (run === 3) {
        const ordinal = digits(s, i, 3);
        i += 3;
        if (year === 0 || ordinal < 1 || ordinal > (isLeap(year) ? 366 : 365)) return null;
        days = daysFromCivil(year, 1, 1) + ordinal - 1;
      } else {
        return NOT_W3C;
      }
    }
  } else if (c === 0x57 /* W, basic week date */) {
    const w = parseWeek(s, i + 1, end, false, year);
    if (w === NOT_W3C || w === null) return w;
    days = w.days;
    i = w.next;
  } else if (digitRun(s, i, end) === 4) {
    const month = digits(s, i, 2);
    const day = digits(s, i + 2, 2);
    i += 4;
    if (!validDate(year, month, day)) return null;
    days = daysFromCivil(year, month, day);
  } else {
    return NOT_W3C;
  }

  let ms = days * MS_PER_DAY;
  let micros = 0;
  if (i < end) {
    c = s.charCodeAt(i);
    if ((c === 0x54 /* T */ || c === 0x74 /* t */ || c === 0x20) && isAsciiDigit(s.charCodeAt(i + 1))) {
      i++;
      const run = digitRun(s, i, end);
      let hour: number;
      let minute = 0;
      let second = 0;
      let withSeconds = false;
      if (run === 2) {
        hour = digits(s, i, 2);
        i += 2;
        if (i < end && s.charCodeAt(i) === 0x3a /* : */) {
          if (digitRun(s, i + 1, end) !== 2) return NOT_W3C;
          minute = digits(s, i + 1, 2);
          i += 3;
          if (i < end && s.charCodeAt(i) === 0x3a) {
            if (digitRun(s, i + 1, end) !== 2) return NOT_W3C;
            second = digits(s, i + 1, 2);
            withSeconds = true;
            i += 3;
          }
        }
      } else if (run === 4 || run === 6) {
        hour = digits(s, i, 2);
        minute = digits(s, i + 2, 2);
        if (run === 6) {
          second = digits(s, i + 4, 2);
          withSeconds = true;
        }
        i += run;
      } else {
        return NOT_W3C;
      }
      if (withSeconds && i < end) {
        c = s.charCodeAt(i);
        if ((c === 0x2e /* . */ || c === 0x2c) /* , */ && isAsciiDigit(s.charCodeAt(i + 1))) {
          i++;
          // Python truncates to microseconds; so do we (no rounding into the next second).
          let frac = 0;
          let n = 0;
          while (i < end && isAsciiDigit(s.charCodeAt(i))) {
            if (n < 6) {
              frac = frac * 10 + (s.charCodeAt(i) - 48);
              n++;
            }
            i++;
          }
          while (n < 6) {
            frac *= 10;
            n++;
          }
          ms += Math.floor(frac / 1000);
          micros = frac % 1000;
        }
      }
      // `2024-05-08 08:53:11 AM` (cdc.gov): common enough on large sitemaps to keep off luxon.
      let j = i < end && s.charCodeAt(i) === 0x20 ? i + 1 : i;
      const m0 = j < end ? s.charCodeAt(j) | 0x20 : -1;
      if ((m0 === 0x61 /* a */ || m0 === 0x70) /* p */ && (s.charCodeAt(j + 1) | 0x20) === 0x6d /* m */) {
        j += 2;
        if (j === end || s.charCodeAt(j) === 0x20) {
          if (hour < 1 || hour > 12) return null;
          hour = (hour % 12) + (m0 === 0x70 ? 12 : 0);
          i = j;
        }
      }
      if (hour > 23 || minute > 59 || second > 59) return null;
      ms += hour * 3_600_000 + minute * 60_000 + second * 1000;
    }
  }

  let offset: number | null = null;
  if (i < end) {
    let j = i;
    if (s.charCodeAt(j) === 0x20) j++;
    c = j < end ? s.charCodeAt(j) : -1;
    if ((c === 0x5a /* Z */ || c === 0x7a) /* z */ && j + 1 === end) {
      offset = 0;
      i = end;
    } else if (c === 0x2b /* + */ || c === 0x2d /* - */) {
      const sign = c === 0x2d ? -1 : 1;
      j++;
      if (digitRun(s, j, end) === 4) {
        offset = digits(s, j, 2) * 60 + digits(s, j + 2, 2);
        if (digits(s, j + 2, 2) > 59) return null;
        j += 4;
      } else if (digitRun(s, j, end) === 2) {
        const h = digits(s, j, 2);
        j += 2;
        let m = 0;
        if (j < end && s.charCodeAt(j) === 0x3a) {
          if (digitRun(s, j + 1, end) !== 2) return NOT_W3C;
          m = digits(s, j + 1, 2);
          j += 3;
        }
        if (m > 59) return null;
        offset = h * 60 + m;
      } else {
        return NOT_W3C;
      }
      if (j !== end) return NOT_W3C;
      if (offset > MAX_OFFSET_MINUTES) return null;
      offset *= sign;
      i = end;
    }
  }
  if (i !== end) return NOT_W3C;
  if (offset !== null) ms -= offset * 60_000;
  return new SitemapDate(ms, offset, micros);
}

function parseWeek(
  s: string,
  i: number,
  end: number,
  extended: boolean,
  year: number,
): { days: number; next: number } | null | typeof NOT_W3C {
  if (digitRun(s, i, end) < 2) return NOT_W3C;
  const week = digits(s, i, 2);
  i += 2;
  let weekday = 1;
  if (extended) {
    if (i < end && s.charCodeAt(i) === 0x2d) {
      if (digitRun(s, i + 1, end) !== 1) return NOT_W3C;
      weekday = s.charCodeAt(i + 1) - 48;
      i += 2;
    }
  } else if (i < end && isAsciiDigit(s.charCodeAt(i))) {
    weekday = s.charCodeAt(i) - 48;
    i++;
  }
  if (i < end && isAsciiDigit(s.charCodeAt(i))) return NOT_W3C;
  if (year === 0 || week < 1 || weekday < 1 || weekday > 7) return null;
  const jan4 = daysFromCivil(year, 1, 4);
  const week1Monday = jan4 - mondayBasedWeekday(jan4);
  const jan1Weekday = mondayBasedWeekday(jan4 - 3);
  // A year has 53 ISO weeks when it starts on a Thursday, or on a Wednesday in a leap year.
  const weeks = jan1Weekday === 3 || (jan1Weekday === 2 && isLeap(year)) ? 53 : 52;
  if (week > weeks) return null;
  return { days: week1Monday + (week - 1) * 7 + weekday - 1, next: i };
}

/**
 * The three shapes generated sitemaps use (`YYYY-MM-DD`, `YYYY-MM-DDThh:mm:ssZ`,
 * `YYYY-MM-DDThh:mm:ss±hh:mm`) read in one pass over a position table. `undefined` for
 * anything else or any out-of-range field: the general path then decides, so the result is
 * always the one it would give.
 */
function commonW3cDate(s: string): SitemapDate | undefined {
  const n = s.length;
  if (n !== 10 && n !== 20 && n !== 25) return undefined;
  // One loop with a single character read: in a document's first parse this function runs
  // unoptimised for thousands of entries and then waits in the optimising compiler's queue
  // behind sax; a read per field (inlined copies of a digit helper) makes a graph several times
  // larger, and in a cold 50,000-URL parse cost about 20 ms more CPU.
  const fields = FIELDS;
  // Not `fill(0)`: a typed array's fill is a call into the runtime, dearer than eight stores.
  for (let f = 0; f < 8; f++) fields[f] = 0;
  let zone = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    const f = FIELD_AT[i];
    if (f >= 0) {
      const d = c - 48;
      // Unsigned: a non-digit below '0' wraps to a huge value, so one compare checks both bounds.
      if (d >>> 0 > 9) return undefined;
      fields[f] = fields[f] * 10 + d;
    } else if (i === 19) zone = c;
    else if (c !== SEPARATOR_AT[i]) return undefined;
  }
  const year = fields[0];
  const month = fields[1];
  const day = fields[2];
  if (!validDate(year, month, day)) return undefined;
  const ms = daysFromCivil(year, month, day) * MS_PER_DAY;
  if (n === 10) return new SitemapDate(ms, null);
  const hour = fields[3];
  const minute = fields[4];
  const second = fields[5];
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const wall = ms + hour * 3_600_000 + minute * 60_000 + second * 1000;
  if (n === 20) return zone === 0x5a /* Z */ ? new SitemapDate(wall, 0) : undefined;
  if (zone !== 0x2b && zone !== 0x2d) return undefined;
  const om = fields[7];
  if (om > 59) return undefined;
  let offset = fields[6] * 60 + om;
  if (offset > MAX_OFFSET_MINUTES) return undefined;
  if (zone === 0x2d) offset = -offset;
  return new SitemapDate(wall - offset * 60_000, offset);
}

// `YYYY-MM-DDThh:mm:ss±hh:mm` by position: the field a digit belongs to (year, month, day, hour,
// minute, second, zone hours, zone minutes), or -1 for a separator; position 19 is the zone sign.
const FIELD_AT = new Int8Array([
  0, 0, 0, 0, -1, 1, 1, -1, 2, 2, -1, 3, 3, -1, 4, 4, -1, 5, 5, -1, 6, 6, -1, 7, 7,
]);
const SEPARATOR_AT = [
  0, 0, 0, 0, 0x2d, 0, 0, 0x2d, 0, 0, 0x54, 0, 0, 0x3a, 0, 0, 0x3a, 0, 0, 0, 0, 0, 0x3a, 0, 0,
];
/** Scratch for commonW3cDate's fields (it never re-enters). */
const FIELDS = new Int32Array(8);

/** commonW3cDate by the COMMON_DATE regex and `Date.parse`; `undefined` where it refuses. */
function nativeCommonDate(s: string): SitemapDate | undefined {
  const n = s.length;
  if ((n !== 10 && n !== 20 && n !== 25) || !COMMON_DATE.test(s)) return undefined;
  // The regex caps the day at 31 whatever the month; `Date.parse` would roll `02-30` into March.
  const d0 = s.charCodeAt(8);
  if (d0 === 0x33 /* 3 */ || (d0 === 0x32 /* 2 */ && s.charCodeAt(9) === 0x39) /* 9 */) {
    const month = (s.charCodeAt(5) - 48) * 10 + s.charCodeAt(6) - 48;
    if (!validDate(digits(s, 0, 4), month, (d0 - 48) * 10 + s.charCodeAt(9) - 48)) return undefined;
  }
  // ECMAScript's date-time format: a date alone is UTC; `Z` and `±hh:mm` are applied.
  const ms = Date.parse(s);
  if (n === 10) return new SitemapDate(ms, null);
  if (n === 20) return new SitemapDate(ms, 0);
  const offset =
    ((s.charCodeAt(20) - 48) * 10 + s.charCodeAt(21) - 48) * 60 +
    (s.charCodeAt(23) - 48) * 10 +
    s.charCodeAt(24) -
    48;
  return new SitemapDate(ms, s.charCodeAt(19) === 0x2d /* - */ ? -offset : offset);
}

/**
 * What nativeCommonDate reads: year 0001-9999, month 01-12, day 01-31, hour 00-23, minute and
 * second 00-59, offset 00:00-23:59 (the general path refuses `24:00`, `:60` and offsets past
 * ±23:59). A match is always in ECMAScript's date-time format, so `Date.parse` never guesses.
 */
const COMMON_DATE =
  /^(?!0000)\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?:T(?:[01]\d|2[0-3])(?::[0-5]\d){2}(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d))?$/;

/** The value of `n` ASCII digits at `i`, or -1. */
function digits(s: string, i: number, n: number): number {
  let v = 0;
  for (let k = 0; k < n; k++) {
    const c = s.charCodeAt(i + k);
    if (c < 48 || c > 57) return -1;
    v = v * 10 + (c - 48);
  }
  return v;
}

/** How many ASCII digits follow from `i` (before `end`). */
function digitRun(s: string, i: number, end: number): number {
  let j = i;
  while (j < end && isAsciiDigit(s.charCodeAt(j))) j++;
  return j - i;
}

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function validDate(y: number, m: number, d: number): boolean {
  if (y < 1 || m < 1 || m > 12 || d < 1) return false;
  return d <= (m === 2 && isLeap(y) ? 29 : DAYS_IN_MONTH[m - 1]);
}

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** 0 = Monday ... 6 = Sunday (1970-01-01 was a Thursday). */
function mondayBasedWeekday(days: number): number {
  return (((days + 3) % 7) + 7) % 7;
}

// ---------------------------------------------------------------------------------------------
// Loose path: RFC 2822 / 1123 / 850, asctime, `2024-05-08 08:53:11 AM`, `06/05/2024` (month first,
// as dateutil reads it), `May 6, 2024` ... Luxon parses the date-time part; zones are taken off
// by hand first because luxon knows none of the abbreviations beyond RFC 822's.

/** Offsets of zone abbreviations, in minutes. Ambiguous ones (BST, IST, CST-as-China) are left out. */
const ZONE_ABBREVIATIONS: Readonly<Record<string, number>> = {
  Z: 0,
  UT: 0,
  UTC: 0,
  GMT: 0,
  EST: -300,
  EDT: -240,
  CST: -360,
  CDT: -300,
  MST: -420,
  MDT: -360,
  PST: -480,
  PDT: -420,
  AKST: -540,
  AKDT: -480,
  HST: -600,
  WET: 0,
  WEST: 60,
  CET: 60,
  CEST: 120,
  MET: 60,
  MEST: 120,
  EET: 120,
  EEST: 180,
};

const MAX_LOOSE_LENGTH = 128;
const WEEKDAY_RE =
  /^(?:mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday)?|thu(?:r(?:s(?:day)?)?)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?)\.?(?: |$)/i;
const TRAILING_COMMENT_RE = / ?\([^()]*\)$/;
const TRAILING_OFFSET_RE = /([+-])(\d{2})(?::?(\d{2}))?$/;
const TRAILING_WORD_RE = /(?:^|[^A-Za-z])([A-Za-z]{1,5})$/;
const ZONE_PREFIX_RE = /(?:GMT|UTC|UT)$/i;
const HAS_TIME_RE = /\d:\d\d/;
const MERIDIEM_RE = /^[AP]M$/i;

const DATE_FORMATS = [
  'd MMM yyyy',
  'd MMMM yyyy',
  'MMM d yyyy',
  'MMMM d yyyy',
  'd-MMM-yyyy',
  'd-MMM-yy',
  'd MMM yy',
  'M/d/yyyy',
  'yyyy/M/d',
  'yyyy-M-d',
];
const TIME_FORMATS = ['', ' H:mm:ss', ' H:mm', ' h:mm:ss a', ' h:mm a', ' H:mm:ss.S', ' h:mm:ssa', ' h:mma'];
/** Every date form with every time form, plus asctime (`Mon May  6 07:08:09 2024`, weekday removed). */
const LOOSE_FORMATS: readonly string[] = [
  ...DATE_FORMATS.flatMap((d) => TIME_FORMATS.map((t) => d + t)),
  'MMM d H:mm:ss yyyy',
];
// Pinned so an application's luxon `Settings` (default locale, zone, numbering) cannot change results.
const LUXON_OPTS = { locale: 'en-US', numberingSystem: 'latn', zone: 'utc' } as const;

/**
 * A cheap shape of a text or format (separators, month name, colons, meridiem, fraction): only the
 * formats of the text's shape are tried, so junk costs a few regex tests instead of eighty.
 */
function shapeKey(
  slash: boolean,
  dash: boolean,
  alpha: boolean,
  colons: number,
  meridiem: boolean,
  frac: boolean,
): number {
  return (
    (slash ? 1 : 0) | (dash ? 2 : 0) | (alpha ? 4 : 0) | (meridiem ? 8 : 0) | (frac ? 16 : 0) | (colons << 5)
  );
}

const FORMATS_BY_SHAPE = new Map<number, number[]>();
LOOSE_FORMATS.forEach((f, k) => {
  const key = shapeKey(
    f.includes('/'),
    f.includes('-'),
    f.includes('MMM'),
    f.split(':').length - 1,
    f.endsWith('a'),
    f.includes('.S'),
  );
  const list = FORMATS_BY_SHAPE.get(key);
  if (list === undefined) FORMATS_BY_SHAPE.set(key, [k]);
  else list.push(k);
});

const ALPHA3_RE = /[A-Za-z]{3}/;
const MERIDIEM_END_RE = /\d ?[AaPp][Mm]$/;
const FRACTION_RE = /:\d\d\.\d/;

function textShape(s: string): number {
  const meridiem = MERIDIEM_END_RE.test(s);
  let colons = 0;
  for (let i = s.indexOf(':'); i !== -1; i = s.indexOf(':', i + 1)) colons++;
  return shapeKey(s.includes('/'), s.includes('-'), ALPHA3_RE.test(s), colons, meridiem, FRACTION_RE.test(s));
}

type LuxonParser = ReturnType<typeof DateTime.buildFormatParser>;
const luxonParsers: (LuxonParser | undefined)[] = new Array(LOOSE_FORMATS.length);
// A sitemap writes all its dates one way: the form that matched last is tried first.
let lastMatched = -1;

function luxonParser(k: number): LuxonParser {
  let p = luxonParsers[k];
  if (p === undefined) {
    p = luxonDateTime().buildFormatParser(LOOSE_FORMATS[k], LUXON_OPTS);
    luxonParsers[k] = p;
  }
  return p;
}

function tryLuxon(text: string, k: number): number | null {
  const dt = luxonDateTime().fromFormatParser(text, luxonParser(k), LUXON_OPTS);
  return dt.isValid ? dt.toMillis() : null;
}

/** Wall-clock milliseconds (as if UTC) of a zone-less date-time text, or `null`. */
function parseWallClock(text: string): { ms: number; micros: number } | null {
  const iso = parseW3cDate(text);
  if (iso !== NOT_W3C) {
    // A zone here would mean two zones (`... +02:00 EST`): refuse rather than pick one.
    return iso === null || iso.hasZone ? null : { ms: iso.epochMs, micros: iso.microseconds };
  }
  if (lastMatched !== -1) {
    const ms = tryLuxon(text, lastMatched);
    if (ms !== null) return { ms, micros: 0 };
  }
  const candidates = FORMATS_BY_SHAPE.get(textShape(text));
  if (candidates === undefined) return null;
  for (const k of candidates) {
    if (k === lastMatched) continue;
    const ms = tryLuxon(text, k);
    if (ms !== null) {
      lastMatched = k;
      return { ms, micros: 0 };
    }
  }
  return null;
}

function parseLooseDate(input: string): SitemapDate | null {
  if (input.length > MAX_LOOSE_LENGTH) return null;
  let s = normaliseLoose(input);
  if (s === '') return null;
  s = s.replace(TRAILING_COMMENT_RE, '');
  s = s.replace(WEEKDAY_RE, '');

  let offset: number | null = null;
  const num = TRAILING_OFFSET_RE.exec(s);
  if (num !== null) {
    let before = s.slice(0, num.index);
    const prefixed = ZONE_PREFIX_RE.exec(before);
    if (prefixed !== null) before = before.slice(0, prefixed.index);
    const separated = before.endsWith(' ') || prefixed !== null;
    // `2024-05-06` ends in `-06` too: a bare offset must follow a time or a space.
    if (separated || (HAS_TIME_RE.test(before) && isAsciiDigit(before.charCodeAt(before.length - 1)))) {
      const h = Number(num[2]);
      const m = num[3] === undefined ? 0 : Number(num[3]);
      if (m > 59 || h * 60 + m > MAX_OFFSET_MINUTES) return null;
      offset = (num[1] === '-' ? -1 : 1) * (h * 60 + m);
      s = before.trimEnd();
    }
  }
  if (offset === null) {
    const word = TRAILING_WORD_RE.exec(s);
    if (word !== null) {
      const name = word[1];
      const known = ZONE_ABBREVIATIONS[name.toUpperCase()];
      const before = s.slice(0, s.length - name.length);
      if (
        known !== undefined &&
        (before === '' || before.endsWith(' ') || isAsciiDigit(before.charCodeAt(before.length - 1)))
      ) {
        offset = known;
        s = before.trimEnd();
      } else if (
        // An unknown zone name after a time: kept as "no zone given", as usp does.
        name.length >= 3 &&
        name === name.toUpperCase() &&
        !MERIDIEM_RE.test(name) &&
        before.endsWith(' ') &&
        HAS_TIME_RE.test(before)
      ) {
        s = before.trimEnd();
      }
    }
  }
  if (s === '') return null;
  const wall = parseWallClock(s);
  if (wall === null) return null;
  const ms = offset === null ? wall.ms : wall.ms - offset * 60_000;
  return new SitemapDate(ms, offset, wall.micros);
}

/** Zero code points of the decimal digit blocks dateutil reads (Python's `int()` accepts any). */
const DIGIT_ZEROS = [0x660, 0x6f0, 0x966, 0x9e6, 0xa66, 0xae6, 0xbe6, 0xc66, 0xce6, 0xd66, 0xe50, 0xff10];

/** Python-style strip, Unicode digits to ASCII, commas and runs of whitespace to one space. */
function normaliseLoose(input: string): string {
  let out = '';
  let space = false;
  for (let i = 0; i < input.length; i++) {
    let c = input.charCodeAt(i);
    if (c === 0x2c || isPythonSpace(c)) {
      space = out !== '';
      continue;
    }
    if (c >= 0x660) {
      for (const zero of DIGIT_ZEROS) {
        if (c >= zero && c <= zero + 9) {
          c = 48 + c - zero;
          break;
        }
      }
    }
    if (space) out += ' ';
    space = false;
    out += String.fromCharCode(c);
  }
  return out;
}
