import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { Settings } from 'luxon';
import { describe, expect, it } from 'vitest';
import { SitemapDate } from '../src/contract/sitemap-date.js';
import {
  generalW3cDate,
  parseIsoDate,
  parseIsoDateCold,
  parseRfc2822Date,
  parseW3cDate,
} from '../src/engine/date.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const sharedDir = process.env.USP_SHARED_DIR ?? join(repoRoot, '..', 'shared');
const datesTable = join(sharedDir, 'conformance', 'helpers', 'dates.json');
const haveTable = existsSync(datesTable);
if (!haveTable)
  console.warn(`[date.test] skipping usp date table: ${datesTable} not found (set USP_SHARED_DIR)`);

const iso = (text: string): string | null => parseIsoDate(text)?.toSourceString() ?? null;
const rfc = (text: string): string | null => parseRfc2822Date(text)?.toSourceString() ?? null;

interface Row {
  input: string | null;
  parse_iso8601_date: string | null | { raises: string };
  parse_rfc2822_date: string | null | { raises: string };
}

type Column = 'iso' | 'rfc' | 'both';
/**
 * Rows of usp's table where we deliberately differ, with what we return instead.
 * Everything else must match usp under the corpus README's rule for dates.
 */
const EXCEPTIONS: Record<string, { column: Column; ours: string | null; reason: string }> = {
  '': { column: 'both', ours: null, reason: 'bad content never throws: empty text is null (usp raises)' },
  '2024': {
    column: 'both',
    ours: '2024-01-01T00:00:00',
    reason: 'deterministic: usp fills month and day from today',
  },
  '2024-05': {
    column: 'both',
    ours: '2024-05-01T00:00:00',
    reason: 'deterministic: usp fills the day from today',
  },
  '10:30': { column: 'both', ours: null, reason: 'a bare time has no date; usp takes today' },
  Monday: { column: 'both', ours: null, reason: 'a weekday is no date; usp takes the next one from today' },
  '1.5': { column: 'both', ours: null, reason: 'not a date; dateutil reads it relative to today' },
  '2024-05-06T07:08:09 EST': {
    column: 'both',
    ours: '2024-05-06T07:08:09-05:00',
    reason: 'US zone mapped; usp drops it',
  },
  '2024-05-06T07:08:09 PST': {
    column: 'both',
    ours: '2024-05-06T07:08:09-08:00',
    reason: 'US zone mapped; usp drops it',
  },
  '2024-05-06T07:08:09 CET': {
    column: 'both',
    ours: '2024-05-06T07:08:09+01:00',
    reason: 'CET mapped; usp drops it',
  },
  'Mon, 06 May 2024 07:08:09 UT': {
    column: 'both',
    ours: '2024-05-06T07:08:09+00:00',
    reason: 'RFC 822 UT is UTC; usp drops it',
  },
  'Mon, 06 May 2024 07:08:09 EDT': {
    column: 'both',
    ours: '2024-05-06T07:08:09-04:00',
    reason: 'RFC 822 EDT mapped; usp drops it',
  },
  '2024-05-06T07:08:09+25:00': {
    column: 'both',
    ours: null,
    reason: 'no such offset; usp returns a datetime Python cannot print',
  },
  '2024-05-06T07:08:09+05:30:15': {
    column: 'iso',
    ours: null,
    reason: 'offsets with seconds are not ISO 8601 and SitemapDate keeps minutes',
  },
  '2024-127': {
    column: 'both',
    ours: '2024-05-06T00:00:00',
    reason: 'ISO 8601 ordinal date; Python 3.11 does not read it',
  },
  '2024-W19-1': {
    column: 'rfc',
    ours: '2024-05-06T00:00:00',
    reason: 'one date grammar for every field: RSS dates read ISO week dates too',
  },
  '2024-W19': {
    column: 'rfc',
    ours: '2024-05-06T00:00:00',
    reason: 'one date grammar for every field: RSS dates read ISO week dates too',
  },
};

const USP_PRINT_RE = /^(-?\d{4,})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{6}))?(?:([+-])(\d\d):(\d\d))?$/;

/** usp's isoformat() string as (wall clock ms, micros, offset minutes | null). */
function readUspDate(s: string): { wallMs: number; micros: number; offset: number | null } {
  const m = USP_PRINT_RE.exec(s);
  if (m === null) throw new Error(`unexpected usp date ${s}`);
  const d = new Date(0);
  d.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  d.setUTCHours(Number(m[4]), Number(m[5]), Number(m[6]), 0);
  const frac = m[7] === undefined ? 0 : Number(m[7]);
  const offset = m[8] === undefined ? null : (m[8] === '-' ? -1 : 1) * (Number(m[9]) * 60 + Number(m[10]));
  return { wallMs: d.getTime() + Math.floor(frac / 1000), micros: frac % 1000, offset };
}

/** The corpus README's rule: same instant when both carry an offset, same wall clock when both are naive. */
function sameAsUsp(ours: SitemapDate | null, usp: string | null): boolean {
  if (ours === null || usp === null) return ours === usp;
  const u = readUspDate(usp);
  if ((ours.offsetMinutes === null) !== (u.offset === null)) return false;
  if (ours.microseconds !== u.micros) return false;
  const uspInstant = u.wallMs - (u.offset ?? 0) * 60_000;
  return ours.epochMs === uspInstant;
}

describe.skipIf(!haveTable)('usp helpers/dates.json', () => {
  const rows: Row[] = haveTable ? JSON.parse(readFileSync(datesTable, 'utf8')).cases : [];

  it('matches every row except the listed deliberate differences', () => {
    expect(rows.length).toBeGreaterThan(50);
    const mismatches: string[] = [];
    for (const row of rows) {
      if (row.input === null) continue; // usp raises for None; TypeScript callers cannot pass null
      const exception = EXCEPTIONS[row.input];
      for (const [column, fn, want] of [
        ['iso', parseIsoDate, row.parse_iso8601_date],
        ['rfc', parseRfc2822Date, row.parse_rfc2822_date],
      ] as const) {
        const ours = fn(row.input);
        if (exception !== undefined && (exception.column === 'both' || exception.column === column)) {
          const got = ours?.toSourceString() ?? null;
          if (got !== exception.ours)
            mismatches.push(`${column} ${JSON.stringify(row.input)}: ${got} (want ${exception.ours})`);
          continue;
        }
        if (typeof want === 'object' && want !== null) {
          mismatches.push(`${column} ${JSON.stringify(row.input)}: usp raises, no exception listed`);
          continue;
        }
        if (!sameAsUsp(ours, want)) {
          mismatches.push(
            `${column} ${JSON.stringify(row.input)}: ${ours?.toSourceString() ?? null}, usp ${want}`,
          );
        }
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('lists no exception for a row the table does not have', () => {
    const inputs = new Set(rows.map((r) => r.input));
    expect(Object.keys(EXCEPTIONS).filter((k) => !inputs.has(k))).toEqual([]);
  });
});

const lastmodCase = join(sharedDir, 'conformance', 'cases', 'xml-lastmod-formats');

describe.skipIf(!existsSync(lastmodCase))('conformance case xml-lastmod-formats', () => {
  it("'xml-lastmod-formats': every <lastmod> as usp reads it, except d09 whose EST keeps its offset", () => {
    const xml = readFileSync(join(lastmodCase, 'input.xml'), 'utf8');
    const expected: { url: string; last_modified: string | null }[] = JSON.parse(
      readFileSync(join(lastmodCase, 'expected.json'), 'utf8'),
    ).pages;
    const lastmods = [...xml.matchAll(/<loc>([^<]*)<\/loc>\s*<lastmod>([^<]*)<\/lastmod>/g)];
    expect(lastmods).toHaveLength(expected.length);
    lastmods.forEach(([, loc, text], k) => {
      expect(loc).toBe(expected[k].url);
      const ours = parseIsoDate(text);
      if (loc.endsWith('/d09')) {
        expect(expected[k].last_modified).toBe('2024-05-06T07:08:09'); // usp: zone dropped
        expect(ours?.toSourceString()).toBe('2024-05-06T07:08:09-05:00');
      } else {
        expect(sameAsUsp(ours, expected[k].last_modified), `${loc} ${text}`).toBe(true);
      }
    });
  });
});

describe('parseIsoDate: W3C / ISO 8601 fast path', () => {
  it('keeps the source offset and says when none was given', () => {
    const d = parseIsoDate('2009-12-17T12:04:56+02:00')!;
    expect(d.offsetMinutes).toBe(120);
    expect(d.epochMs).toBe(Date.UTC(2009, 11, 17, 10, 4, 56));
    expect(d.toSourceString()).toBe('2009-12-17T12:04:56+02:00');
    const naive = parseIsoDate('2009-12-17T12:04:56')!;
    expect(naive.offsetMinutes).toBeNull();
    expect(naive.hasZone).toBe(false);
  });

  it('completes partial dates deterministically (never today)', () => {
    expect(iso('2024')).toBe('2024-01-01T00:00:00');
    expect(iso('2024-05')).toBe('2024-05-01T00:00:00');
    expect(iso('0001')).toBe('0001-01-01T00:00:00');
    expect(iso('2024-13')).toBeNull();
  });

  it('reads the other ISO forms', () => {
    expect(iso('2024-05-06T07')).toBe('2024-05-06T07:00:00');
    expect(iso('2024-05-06t07:08:09z')).toBe('2024-05-06T07:08:09+00:00');
    expect(iso('20240506T0708')).toBe('2024-05-06T07:08:00');
    expect(iso('2024-05-06T070809.25-0330')).toBe('2024-05-06T07:08:09.250000-03:30');
    expect(iso('2024-05-06T07:08:09 +02:00')).toBe('2024-05-06T07:08:09+02:00');
    expect(iso('2024-05-06+02:00')).toBe('2024-05-06T00:00:00+02:00'); // xs:date with a zone
    expect(iso('2024-05-06Z')).toBe('2024-05-06T00:00:00+00:00');
    expect(iso('2024W191')).toBe('2024-05-06T00:00:00');
    expect(iso('2024-W19-7')).toBe('2024-05-12T00:00:00');
    expect(iso('2026-W53-1')).toBe('2026-12-28T00:00:00'); // 2026 starts on a Thursday: 53 weeks
    expect(iso('2024-W53-1')).toBeNull();
    expect(iso('2025-W01-1')).toBe('2024-12-30T00:00:00'); // week 1 can start in the previous year
    expect(iso('2024-366')).toBe('2024-12-31T00:00:00');
    expect(iso('2023-366')).toBeNull();
    expect(iso('\n\t 2024-05-06T07:08:09Z \n')).toBe('2024-05-06T07:08:09+00:00');
  });

  it('truncates fractions to microseconds and keeps them', () => {
    const d = parseIsoDate('2024-05-06T07:08:09.1234569Z')!;
    expect(d.microseconds).toBe(456);
    expect(d.epochMs % 1000).toBe(123);
    expect(iso('2024-05-06T07:08:09.000001Z')).toBe('2024-05-06T07:08:09.000001+00:00');
  });

  it('refuses impossible values', () => {
    for (const s of [
      '2024-02-30',
      '2024-00-10',
      '2024-05-06T24:00',
      '2024-05-06T23:60',
      '2024-05-06T07:08:09+24:00',
    ]) {
      expect(iso(s), s).toBeNull();
    }
    expect(iso('2024-05-06T07:08:09+01:60')).toBeNull();
    expect(iso('2024-05-06T07:08.5')).toBeNull(); // fractions belong to seconds only
  });

  it('tells "not my syntax" from "impossible value"', () => {
    expect(parseW3cDate('Mon, 06 May 2024')).toBeUndefined();
    expect(parseW3cDate('2024-02-30')).toBeNull();
  });
});

describe('loose forms (luxon)', () => {
  it('reads RFC 2822 / 1123 / 850 and asctime, ignoring a wrong weekday', () => {
    expect(rfc('Thu, 17 Dec 2009 12:04:56 +0200')).toBe('2009-12-17T12:04:56+02:00');
    expect(rfc('Thu, 17 Dec 2009 12:04 GMT')).toBe('2009-12-17T12:04:00+00:00');
    expect(rfc('17 Dec 2009 12:04:56 -0000')).toBe('2009-12-17T12:04:56+00:00');
    expect(rfc('Sun, 17 Dec 2009 12:04:56 +0200')).toBe('2009-12-17T12:04:56+02:00');
    expect(rfc('Thursday, 17-Dec-09 12:04:56 GMT')).toBe('2009-12-17T12:04:56+00:00');
    expect(rfc('Thu Dec 17 12:04:56 2009')).toBe('2009-12-17T12:04:56');
    expect(rfc('thu, 17 dec 2009 12:04:56 +0200')).toBe('2009-12-17T12:04:56+02:00');
    expect(rfc('Thu, 17 Dec 2009 12:04:56 +0000 (UTC)')).toBe('2009-12-17T12:04:56+00:00');
    expect(rfc('Thu, 17 Dec 2009 12:04:56 GMT+0100')).toBe('2009-12-17T12:04:56+01:00');
  });

  it('maps zone abbreviations to offsets', () => {
    const cases: [string, string][] = [
      ['EST', '-05:00'],
      ['EDT', '-04:00'],
      ['CST', '-06:00'],
      ['CDT', '-05:00'],
      ['MST', '-07:00'],
      ['MDT', '-06:00'],
      ['PST', '-08:00'],
      ['PDT', '-07:00'],
      ['UT', '+00:00'],
      ['UTC', '+00:00'],
      ['GMT', '+00:00'],
      ['CEST', '+02:00'],
    ];
    for (const [zone, offset] of cases) {
      expect(rfc(`Mon, 06 May 2024 07:08:09 ${zone}`), zone).toBe(`2024-05-06T07:08:09${offset}`);
    }
  });

  it('keeps an unknown zone name as "no zone given" (as usp)', () => {
    expect(rfc('Mon, 06 May 2024 07:08:09 XYZ')).toBe('2024-05-06T07:08:09');
  });

  it('reads the forms sitemaps use in the wild', () => {
    expect(iso('2024-05-08 08:53:11 AM')).toBe('2024-05-08T08:53:11'); // cdc.gov
    expect(iso('2024-05-08 08:53:11 PM')).toBe('2024-05-08T20:53:11');
    expect(iso('2024-05-08 12:00:00 AM')).toBe('2024-05-08T00:00:00');
    expect(iso('06/05/2024')).toBe('2024-06-05T00:00:00'); // month first, as dateutil
    expect(iso('6/5/2024 3:04 PM')).toBe('2024-06-05T15:04:00');
    expect(iso('May 6, 2024')).toBe('2024-05-06T00:00:00');
    expect(iso('6 May 2024 07:08')).toBe('2024-05-06T07:08:00');
    expect(iso('September 6, 2024')).toBe('2024-09-06T00:00:00');
    expect(iso('2024/05/06 07:08:09')).toBe('2024-05-06T07:08:09');
  });

  it('is not confused by a date that ends like an offset', () => {
    expect(iso('Mon 2024-05-06')).toBe('2024-05-06T00:00:00');
  });

  it('refuses what is not a date, and over-long input', () => {
    for (const s of [
      'yesterday',
      'now',
      '31/12/2024',
      'Feb 30 2024',
      '07:08',
      `2024-05-06${' '.repeat(200)}x`,
    ]) {
      expect(iso(s), s).toBeNull();
    }
  });

  it('does not depend on luxon global settings', () => {
    const saved = {
      zone: Settings.defaultZone,
      locale: Settings.defaultLocale,
      ns: Settings.defaultNumberingSystem,
    };
    try {
      Settings.defaultZone = 'America/New_York';
      Settings.defaultLocale = 'fr-FR';
      Settings.defaultNumberingSystem = 'arab';
      expect(rfc('Thu, 17 Dec 2009 12:04:56')).toBe('2009-12-17T12:04:56');
      expect(rfc('Thu, 17 Dec 2009 12:04:56 +0200')).toBe('2009-12-17T12:04:56+02:00');
    } finally {
      Settings.defaultZone = saved.zone;
      Settings.defaultLocale = saved.locale;
      Settings.defaultNumberingSystem = saved.ns;
    }
  });

  it('tries the form that matched last first, without changing results', () => {
    expect(iso('2024-05-08 08:53:11 AM')).toBe('2024-05-08T08:53:11');
    expect(iso('May 6 2024')).toBe('2024-05-06T00:00:00');
    expect(iso('2024-05-08 08:53:11 PM')).toBe('2024-05-08T20:53:11');
  });
});

describe('properties', () => {
  it('never throws, whatever the text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (s) => {
        parseIsoDate(s);
        parseRfc2822Date(s);
      }),
      { numRuns: 1000 },
    );
  }, 60_000);

  it('reads the three common shapes as the general path does, impossible fields and stray characters included', () => {
    // parseW3cDate tries the common shapes' own reader first (commonW3cDate): whatever it accepts
    // must be what the general path gives, and what it refuses the general path decides.
    const two = (max: number) => fc.integer({ min: 0, max }).map((v) => String(v).padStart(2, '0'));
    const arb = fc.record({
      year: fc.oneof(
        fc.integer({ min: 0, max: 9999 }),
        fc.constantFrom(0, 1, 1600, 1900, 2000, 2023, 2024, 2100, 9999),
      ),
      month: two(19),
      day: fc.oneof(two(39), fc.constantFrom('28', '29', '30', '31')),
      time: fc.tuple(two(29), two(69), two(69)),
      zone: fc.oneof(
        fc.constant('Z'),
        fc.tuple(fc.constantFrom('+', '-'), two(29), two(69)).map(([s, h, m]) => `${s}${h}:${m}`),
      ),
      shape: fc.constantFrom(10, 20, 25),
      stray: fc.option(
        fc.tuple(fc.nat(24), fc.constantFrom(' ', 'x', '/', ':', '-', 'T', 'Z', '+', 't', 'z', '\u0660')),
      ),
    });
    fc.assert(
      fc.property(arb, ({ year, month, day, time, zone, shape, stray }) => {
        let s = `${String(year).padStart(4, '0')}-${month}-${day}`;
        if (shape > 10) s += `T${time.join(':')}${shape === 20 ? 'Z' : zone === 'Z' ? '+00:00' : zone}`;
        if (stray !== null) s = s.slice(0, stray[0]) + stray[1] + s.slice(stray[0] + 1);
        // parseIsoDateCold reads the same shapes its own way: the same answer as parseIsoDate.
        const cold = parseIsoDateCold(s);
        const warm = parseIsoDate(s);
        expect(cold === null, s).toBe(warm === null);
        if (cold !== null && warm !== null) {
          expect(
            [Object.is(cold.epochMs, warm.epochMs), Object.is(cold.offsetMinutes, warm.offsetMinutes)],
            s,
          ).toEqual([true, true]);
          expect(cold.microseconds, s).toBe(warm.microseconds);
        }
        const common = parseW3cDate(s);
        const general = generalW3cDate(s);
        if (general === undefined || general === null) {
          expect(common, s).toBe(general);
          return;
        }
        expect(common, s).not.toBeNull();
        expect(common, s).not.toBeUndefined();
        expect(Object.is(common!.epochMs, general.epochMs), s).toBe(true);
        expect(Object.is(common!.offsetMinutes, general.offsetMinutes), s).toBe(true);
        expect(common!.microseconds, s).toBe(general.microseconds);
      }),
      { numRuns: 20_000 },
    );
  }, 60_000);

  it('round-trips every valid W3C datetime', () => {
    const arb = fc.record({
      // A day inside the year range, so the wall clock in any offset stays in years 1-9999.
      ms: fc.integer({ min: -62_135_596_800_000 + 86_400_000, max: 253_402_300_799_999 - 86_400_000 }),
      micros: fc.integer({ min: 0, max: 999 }),
      offset: fc.option(fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 })),
    });
    fc.assert(
      fc.property(arb, ({ ms, micros, offset }) => {
        const text = new SitemapDate(ms, offset, micros).toSourceString();
        const back = parseIsoDate(text)!;
        expect(back.epochMs).toBe(ms);
        expect(back.offsetMinutes).toBe(offset);
        expect(back.microseconds).toBe(micros);
      }),
      { numRuns: 2000 },
    );
  }, 60_000);
});
