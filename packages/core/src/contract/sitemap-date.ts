import { brandClass, isBranded } from './brand.js';

/**
 * A date as a sitemap gave it: the instant plus the UTC offset the source wrote, or
 * "no zone given" (`offsetMinutes === null`), which JavaScript's `Date` cannot express.
 * Immutable; serialises (`toJSON`, `toString`) as the source wrote it, offset or none
 * (`toSourceString`); `toISOString` is unambiguous: `Z` for a date without a zone.
 */
export class SitemapDate {
  /** True for a `SitemapDate` from any copy of core (see brand.ts). */
  static [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class `instanceof` asked about, a subclass included
    return isBranded(this, value);
  }

  /**
   * With a zone: the instant in ms since the epoch. Without: the wall-clock time read as if it were UTC.
   */
  declare readonly epochMs: number;
  /** Offset east of UTC in minutes as written by the source; `null` when the source gave no zone. */
  declare readonly offsetMinutes: number | null;
  /** Sub-millisecond digits (0-999 microseconds) kept so `.123456` round-trips. */
  declare readonly microseconds: number;

  constructor(epochMs: number, offsetMinutes: number | null, microseconds = 0) {
    this.epochMs = epochMs;
    this.offsetMinutes = offsetMinutes;
    this.microseconds = microseconds;
  }

  get hasZone(): boolean {
    return this.offsetMinutes !== null;
  }

  /** A `Date` for the instant; a zoneless date is taken as UTC. */
  toDate(): Date {
    return new Date(this.epochMs);
  }

  /**
   * ISO 8601 that names one instant: as `toSourceString()`, and a date the source wrote without a
   * zone gets `Z`, since core reads such a date as UTC (as `toDate()` and `epochMs` do). So
   * `new Date(d.toISOString())` is always `d.toDate()`.
   */
  toISOString(): string {
    const s = this.toSourceString();
    return this.offsetMinutes === null ? `${s}Z` : s;
  }

  /**
   * `YYYY-MM-DDTHH:MM:SS[.ffffff][±HH:MM]` as the source wrote it: wall-clock time in the source
   * offset, and no zone designator when the source gave none (Python's `isoformat()` of a naive
   * datetime, which usp prints). The JSON form and the CLI outputs use this, as usp does.
   */
  toSourceString(): string {
    const off = this.offsetMinutes ?? 0;
    const wallMs = this.epochMs + off * 60_000;
    // The printers call this for every page: arithmetic on the instant instead of a `Date` and
    // six getters (about half the time); anything unusual takes the general path below.
    if (
      !Number.isInteger(wallMs) ||
      wallMs < MIN_FAST_MS ||
      wallMs > MAX_FAST_MS ||
      !Number.isInteger(off) ||
      off <= -6000 ||
      off >= 6000 ||
      !Number.isInteger(this.microseconds) ||
      this.microseconds < 0 ||
      this.microseconds > 999
    ) {
      return this.#generalISOString();
    }
    let days = Math.floor(wallMs / DAY_MS);
    let rest = wallMs - days * DAY_MS;
    const offKey = this.offsetMinutes ?? NO_ZONE;
    const slot = (days + rest * 31) & TEXT_CACHE_MASK;
    if (
      TEXT_CACHE_MS[slot] === this.epochMs &&
      TEXT_CACHE_OFFSET[slot] === offKey &&
      TEXT_CACHE_MICROS[slot] === this.microseconds
    ) {
      return TEXT_CACHE[slot] as string;
    }
    const hours = Math.floor(rest / 3_600_000);
    rest -= hours * 3_600_000;
    const minutes = Math.floor(rest / 60_000);
    rest -= minutes * 60_000;
    const seconds = Math.floor(rest / 1000);
    const millis = rest - seconds * 1000;
    // Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's civil_from_days).
    days += 719_468;
    const era = Math.floor(days / 146_097);
    const doe = days - era * 146_097;
    const yoe = Math.floor(
      (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
    );
    const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
    const mp = Math.floor((5 * doy + 2) / 153);
    const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
    const month = mp < 10 ? mp + 3 : mp - 9;
    const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
    let s = `${year >= 1000 ? year : pad(year, 4)}-${TWO_DIGITS[month]}-${TWO_DIGITS[day]}T${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}`;
    const micros = millis * 1000 + this.microseconds;
    if (micros !== 0) s += `.${pad(micros, 6)}`;
    if (this.offsetMinutes !== null) {
      const abs = off < 0 ? -off : off;
      const h = Math.floor(abs / 60);
      s += `${off < 0 ? '-' : '+'}${TWO_DIGITS[h]}:${TWO_DIGITS[abs - h * 60]}`;
    }
    TEXT_CACHE_MS[slot] = this.epochMs;
    TEXT_CACHE_OFFSET[slot] = offKey;
    TEXT_CACHE_MICROS[slot] = this.microseconds;
    TEXT_CACHE[slot] = s;
    return s;
  }

  #generalISOString(): string {
    const off = this.offsetMinutes ?? 0;
    const wall = new Date(this.epochMs + off * 60_000);
    const y = wall.getUTCFullYear();
    let s = `${y < 0 ? '-' : ''}${pad(Math.abs(y), 4)}-${pad(wall.getUTCMonth() + 1, 2)}-${pad(wall.getUTCDate(), 2)}T${pad(wall.getUTCHours(), 2)}:${pad(wall.getUTCMinutes(), 2)}:${pad(wall.getUTCSeconds(), 2)}`;
    const micros = wall.getUTCMilliseconds() * 1000 + this.microseconds;
    if (micros !== 0) s += `.${pad(micros, 6)}`;
    if (this.offsetMinutes !== null) {
      const sign = off < 0 ? '-' : '+';
      const abs = Math.abs(off);
      s += `${sign}${pad(Math.floor(abs / 60), 2)}:${pad(abs % 60, 2)}`;
    }
    return s;
  }

  toJSON(): string {
    return this.toSourceString();
  }

  toString(): string {
    return this.toSourceString();
  }
}

brandClass(SitemapDate, 'SitemapDate');

const DAY_MS = 86_400_000;
/** Years 0000 to 9999: four digits, no sign, where the arithmetic path and `Date` agree. */
const MIN_FAST_MS = -62_167_219_200_000; // 0000-01-01T00:00:00Z
const MAX_FAST_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
/**
 * The text of the last dates written, by day and time of day (`toSourceString`, fast path). A
 * sitemap's pages share few `<lastmod>` values (a date without a time most often), and the
 * printers write one for every page: a text put together from eleven pieces each time was
 * ~300 bytes of garbage a page (a fresh 1,000-site batch: 158 MB, ~10 % of its job's).
 * 512 slots take 512 consecutive days without a collision; a miss costs three comparisons.
 */
const TEXT_CACHE_MASK = 511;
const TEXT_CACHE_MS = new Float64Array(TEXT_CACHE_MASK + 1);
/** The offset in minutes, or NO_ZONE; no date has the initial value. */
const TEXT_CACHE_OFFSET = new Int32Array(TEXT_CACHE_MASK + 1).fill(0x7fffffff);
const TEXT_CACHE_MICROS = new Int32Array(TEXT_CACHE_MASK + 1);
const TEXT_CACHE: string[] = new Array<string>(TEXT_CACHE_MASK + 1).fill('');
const NO_ZONE = 100_000;

const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => (i < 10 ? `0${i}` : `${i}`));

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}
