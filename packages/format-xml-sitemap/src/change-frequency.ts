import type { ChangeFrequency } from '@usp-ts/core';

/**
 * Reads a `<changefreq>` value, case-insensitively and stripped. `null` for an empty value;
 * `undefined` for a value outside the seven (the caller turns that into `always`, as usp does).
 */
export function parseChangeFrequency(text: string): ChangeFrequency | null | undefined {
  const s = text.trim();
  if (s.length === 0) return null;
  // Sitemaps almost always write the lower-case form: match it before lower-casing.
  return known(s) ?? known(s.toLowerCase());
}

function known(s: string): ChangeFrequency | undefined {
  switch (s) {
    case 'always':
    case 'hourly':
    case 'daily':
    case 'weekly':
    case 'monthly':
    case 'yearly':
    case 'never':
      return s;
    default:
      return undefined;
  }
}
