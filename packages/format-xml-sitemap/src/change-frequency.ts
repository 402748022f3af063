import type { ChangeFrequency } from '@usp-ts/core/parse';

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
  // One string comparison: the first letter picks the only candidate.
  let candidate: ChangeFrequency;
  switch (s.charCodeAt(0)) {
    case 97 /* a */:
      candidate = 'always';
      break;
    case 104 /* h */:
      candidate = 'hourly';
      break;
    case 100 /* d */:
      candidate = 'daily';
      break;
    case 119 /* w */:
      candidate = 'weekly';
      break;
    case 109 /* m */:
      candidate = 'monthly';
      break;
    case 121 /* y */:
      candidate = 'yearly';
      break;
    case 110 /* n */:
      candidate = 'never';
      break;
    default:
      return undefined;
  }
  return s === candidate ? candidate : undefined;
}
