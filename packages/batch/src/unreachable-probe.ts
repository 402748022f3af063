import type { WebClient } from '@usp-ts/core';
import type { UnreachableMark } from './state-store.js';

/**
 * How long the one probe of a site that gave no answer on its previous run waits, in ms. Long
 * enough for a live host to answer its robots.txt, short next to the full walk's timeouts and
 * retries (a host that accepts and never answers cost two 10 s timeouts a run without it). It
 * also bounds a no-change run from below: at 2 s, start-up (~0.25 s) plus the probe was already
 * more than the 2.1 s a run of 1,000 sites needs to be 10x faster than the first one.
 */
export const DEFAULT_PROBE_TIMEOUT_MS = 1_500;

/**
 * Sends the one probe request: robots.txt, no retry, `timeoutMs` at most. Resolves `null` when the
 * site answered (any HTTP status: it is walked as usual), or the failure as `url: message` when
 * nothing answered. Rejects only when `signal` fired (the walk was aborted).
 */
export async function probeSite(
  client: WebClient,
  site: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<string | null> {
  const url = new URL('/robots.txt', site).href;
  const timeout = AbortSignal.timeout(timeoutMs);
  const both = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
  try {
    const response = await client.get(url, { signal: both, shouldRetry: () => false });
    if (response.kind === 'ok') response.cancel();
    return response.kind === 'error' && response.status === null ? `${url}: ${response.message}` : null;
  } catch (error) {
    if (signal?.aborted) throw error;
    if (timeout.aborted) return `${url}: no answer within ${timeoutMs} ms`;
    throw error;
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** The reason of a site that failed its probe: what failed, and why only a probe was sent. */
export function probeFailureText(failure: string, previous: UnreachableMark): string {
  const since = previous.since < previous.at ? `, and none since ${iso(previous.since)}` : '';
  return `${failure} (one probe only: the site gave no answer on the previous run, at ${iso(previous.at)}${since})`;
}
