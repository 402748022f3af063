/**
 * `n` written with a comma between groups of three digits, as `n.toLocaleString('en-US')` writes
 * an integer. Not through Intl: V8 builds ICU's whole locale table on its first number
 * formatting, ~0.1 G instructions (~25 ms of CPU) that a help text built at import cost every
 * `usp ls` process.
 */
export function groupDigits(n: number): string {
  if (!Number.isSafeInteger(n)) return n.toLocaleString('en-US');
  return String(n).replace(/\B(?=(?:\d{3})+$)/g, ',');
}
