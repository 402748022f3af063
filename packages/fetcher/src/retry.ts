/** usp's `RETRYABLE_HTTP_STATUS_CODES`; 403 and 404 are deliberately absent. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([
  400, 408, 429, 499, 500, 502, 503, 504, 509, 520, 521, 522, 523, 524, 525, 526, 527, 530, 598,
]);

/**
 * `Retry-After` in milliseconds from now: delta-seconds or an HTTP date; `null` when absent or
 * unreadable. A date in the past gives 0.
 */
export function parseRetryAfter(value: string | null, now?: number): number | null {
  // Checked before the clock is read: every 404 of a walk's probes comes here without one.
  if (value === null) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  // Only HTTP-date forms (they all contain a letter for the month or weekday), never bare numbers.
  if (!/[a-z]/i.test(v)) return null;
  const t = Date.parse(v);
  if (Number.isNaN(t)) return null;
  return Math.max(0, t - (now ?? Date.now()));
}

/**
 * Exponential backoff with "equal jitter": half the step is fixed so retries never bunch up at
 * zero, half is random so a fleet of clients spreads out. `retry` counts from 1.
 */
export function backoffDelay(
  retry: number,
  baseDelayMs: number,
  maxDelayMs: number,
  random = Math.random,
): number {
  const step = Math.min(maxDelayMs, baseDelayMs * 2 ** (retry - 1));
  return Math.round(step / 2 + (random() * step) / 2);
}
