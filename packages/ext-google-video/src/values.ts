/** `yes`/`no` (any case) as a boolean; `undefined` for anything else. */
export function yesNo(raw: string): boolean | undefined {
  const s = raw.trim().toLowerCase();
  if (s === 'yes') return true;
  if (s === 'no') return false;
  return undefined;
}

const WHOLE = /^\d+$/;
const DECIMAL = /^\d+(?:\.\d+)?$|^\.\d+$/;

/** A non-negative whole number written in ASCII digits; `undefined` otherwise. */
export function wholeNumber(raw: string): number | undefined {
  const s = raw.trim();
  if (!WHOLE.test(s)) return undefined;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A non-negative decimal (`4.2`, `.5`); `undefined` otherwise. */
export function decimal(raw: string): number | undefined {
  const s = raw.trim();
  return DECIMAL.test(s) ? Number(s) : undefined;
}

/** `allow` or `deny` (any case); `undefined` otherwise. */
export function relationship(raw: string | undefined): 'allow' | 'deny' | undefined {
  const s = raw?.trim().toLowerCase();
  return s === 'allow' || s === 'deny' ? s : undefined;
}

/** Space-separated tokens. */
export function tokens(raw: string): string[] {
  return raw.split(/\s+/).filter((t) => t.length > 0);
}
