import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SitemapDate } from '../src/index.js';

/** The formatter as it was before the arithmetic fast path: `Date` and its getters. The reference. */
function referenceISOString(d: SitemapDate): string {
  const pad = (n: number, width: number) => String(n).padStart(width, '0');
  const off = d.offsetMinutes ?? 0;
  const wall = new Date(d.epochMs + off * 60_000);
  const y = wall.getUTCFullYear();
  let s = `${y < 0 ? '-' : ''}${pad(Math.abs(y), 4)}-${pad(wall.getUTCMonth() + 1, 2)}-${pad(wall.getUTCDate(), 2)}T${pad(wall.getUTCHours(), 2)}:${pad(wall.getUTCMinutes(), 2)}:${pad(wall.getUTCSeconds(), 2)}`;
  const micros = wall.getUTCMilliseconds() * 1000 + d.microseconds;
  if (micros !== 0) s += `.${pad(micros, 6)}`;
  if (d.offsetMinutes !== null) {
    const sign = off < 0 ? '-' : '+';
    const abs = Math.abs(off);
    s += `${sign}${pad(Math.floor(abs / 60), 2)}:${pad(abs % 60, 2)}`;
  }
  return s;
}

const DATE_LIMIT = 8.64e15;
const YEAR_0 = -62_167_219_200_000;
const YEAR_10000 = 253_402_300_800_000;

describe('SitemapDate.toISOString', () => {
  it('prints exactly what the Date-based formatter printed, for every instant, offset and precision', () => {
    const epochMs = fc.oneof(
      fc.integer({ min: YEAR_0 - 86_400_000, max: YEAR_10000 + 86_400_000 }),
      // Around the edges of the arithmetic path, month and leap-day boundaries, the epoch.
      fc.constantFrom(
        YEAR_0,
        YEAR_0 - 1,
        YEAR_10000 - 1,
        YEAR_10000,
        0,
        -1,
        951_782_400_000,
        4_107_542_400_000,
      ),
      fc.integer({ min: -DATE_LIMIT, max: DATE_LIMIT }),
      fc.double({ min: -1e13, max: 1e13, noNaN: true }),
    );
    const offset = fc.oneof(
      fc.constant(null),
      fc.integer({ min: -1440, max: 1440 }),
      fc.constantFrom(0, -0, 840, -720, 5999, 6000, -6000, 30.5),
    );
    const micros = fc.oneof(fc.integer({ min: 0, max: 999 }), fc.constantFrom(0, 999, 1000, 0.5));
    fc.assert(
      fc.property(epochMs, offset, micros, (ms, off, us) => {
        const d = new SitemapDate(ms, off, us);
        expect(d.toSourceString()).toBe(referenceISOString(d));
      }),
      { numRuns: 20_000 },
    );
  });

  it('prints the usual shapes', () => {
    expect(new SitemapDate(Date.UTC(2024, 1, 29, 23, 59, 59), 330, 7).toSourceString()).toBe(
      '2024-03-01T05:29:59.000007+05:30',
    );
    expect(new SitemapDate(Date.UTC(1999, 11, 31), null).toSourceString()).toBe('1999-12-31T00:00:00');
    expect(new SitemapDate(Date.UTC(2000, 0, 1, 0, 0, 0, 123), -300).toSourceString()).toBe(
      '1999-12-31T19:00:00.123000-05:00',
    );
  });

  it('toISOString names one instant: Z for a date written without a zone, the source offset otherwise', () => {
    const naive = new SitemapDate(Date.UTC(1999, 11, 31), null);
    expect(naive.toISOString()).toBe('1999-12-31T00:00:00Z');
    expect(naive.toSourceString()).toBe('1999-12-31T00:00:00');
    expect(naive.toJSON()).toBe('1999-12-31T00:00:00');
    const zoned = new SitemapDate(Date.UTC(2000, 0, 1, 0, 0, 0, 123), -300);
    expect(zoned.toISOString()).toBe('1999-12-31T19:00:00.123000-05:00');
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1000, 0, 1), max: Date.UTC(9999, 11, 31) }),
        fc.option(fc.integer({ min: -14 * 60, max: 14 * 60 }), { nil: null }),
        (ms, offset) => {
          const d = new SitemapDate(ms, offset);
          expect(new Date(d.toISOString()).getTime()).toBe(d.toDate().getTime());
        },
      ),
    );
  });
});

describe('SitemapDate.toSourceString: the text of recent dates, kept', () => {
  it('gives each date its own text when dates share a kept slot, whatever the order', () => {
    const DAY = 86_400_000;
    const base = Date.UTC(2026, 2, 14);
    // Same slot: days 512 apart at the same time of day; the same instant in other zones and
    // precisions; the zoneless date of that instant.
    const dates = [
      new SitemapDate(base, null),
      new SitemapDate(base + 512 * DAY, null),
      new SitemapDate(base - 512 * DAY, null),
      new SitemapDate(base, 0),
      new SitemapDate(base, 60),
      new SitemapDate(base, -330),
      new SitemapDate(base, null, 1),
      new SitemapDate(base + 1, null),
      new SitemapDate(base + 512 * DAY + 1, 0),
    ];
    const first = dates.map((d) => d.toSourceString());
    expect(first).toEqual(dates.map(referenceISOString));
    expect(new Set(first).size).toBe(dates.length);
    fc.assert(
      fc.property(fc.array(fc.nat(dates.length - 1), { minLength: 1, maxLength: 60 }), (order) => {
        for (const i of order) expect((dates[i] as SitemapDate).toSourceString()).toBe(first[i]);
      }),
      { seed: 21, numRuns: 200 },
    );
  });
});
