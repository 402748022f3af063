import { brandClass, isBranded } from './brand.js';

/**
 * A date as a sitemap gave it: the instant plus the UTC offset the source wrote, or
 * "no zone given" (`offsetMinutes === null`), which JavaScript's `Date` cannot express.
 * Immutable; serialises to ISO 8601 keeping the source offset.
 */
export class SitemapDate {
  /** True for a `SitemapDate` from any copy of core (see brand.ts). */
  static [Symbol.hasInstance](value: unknown): boolean {
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

  /** `YYYY-MM-DDTHH:MM:SS[.ffffff][±HH:MM]`: wall-clock time in the source offset. */
  toISOString(): string {
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
    return this.toISOString();
  }

  toString(): string {
    return this.toISOString();
  }
}

brandClass(SitemapDate, 'SitemapDate');

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}
