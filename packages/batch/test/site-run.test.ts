import { createRegistry } from '@usp-ts/core';
import { describe, expect, it } from 'vitest';
import { batchWalk } from '../src/batch-walk.js';
import { memorySink } from '../src/memory-sink.js';
import { checkSiteRunOptions, DEFAULT_SITES } from '../src/site-run.js';

const webClient = { get: async () => ({ kind: 'error', code: 'network', message: 'unused' }) } as never;
const base = { webClient, registry: createRegistry([]), sink: memorySink() };

/** The first thing `batchWalk` does: its options are checked before any line is read. */
async function batchError(options: object): Promise<unknown> {
  try {
    await batchWalk([], { ...base, ...options } as never).next();
  } catch (error) {
    return error;
  }
  return null;
}

describe('SiteRunOptions', () => {
  it('applies the documented defaults', () => {
    const run = checkSiteRunOptions(base, {});
    expect(run).toMatchObject({
      sites: DEFAULT_SITES,
      perHost: 2,
      maxCrawlDelayMs: 10_000,
      siteDeadlineMs: 600_000,
      fullEveryMs: null,
      probeTimeoutMs: 1_500,
      state: null,
      gate: null,
    });
  });

  it.each([
    [{ siteDeadlinMs: 5 }, 'Option siteDeadlinMs: unknown option (did you mean siteDeadlineMs?)'],
    [{ sites: 0 }, 'Option sites: must be an integer >= 1'],
    [{ perHost: 1.5 }, 'Option perHost: must be an integer >= 1'],
    [{ maxCrawlDelayMs: -1 }, 'Option maxCrawlDelayMs: must be a number of ms >= 0'],
    [{ siteDeadlineMs: '10m' }, 'Option siteDeadlineMs: must be a number of ms > 0'],
    [{ fullEveryMs: 0 }, 'Option fullEveryMs: must be a number of ms > 0'],
    [{ probeTimeoutMs: Number.NaN }, 'Option probeTimeoutMs: must be a number of ms > 0'],
    [{ state: {} }, 'Option state: must be a StateStore (loadSite, saveSite, ...) or null'],
    [{ gate: { acquire: () => {} } }, 'Option gate: must be a PolitenessGate (acquire, setCrawlDelay)'],
    [{ walkOptions: { signal: null } }, 'Option walkOptions.signal: is set by the runner for each site'],
    [{ registry: undefined }, 'Option registry: is required'],
  ])('batchWalk refuses %j before walking', async (options, message) => {
    const error = (await batchError(options)) as Error & { code?: string };
    expect(error?.message).toContain(message);
    expect(error?.code).toBe('USP_INVALID_OPTION');
  });

  it("knows a runner's own options beside the run's, and only those", () => {
    expect(() =>
      checkSiteRunOptions({ ...base, lockDurationMs: 1 } as never, { lockDurationMs: true }),
    ).not.toThrow();
    expect(() => checkSiteRunOptions({ ...base, isDone: () => false } as never, {})).toThrow(
      'Option isDone: unknown option',
    );
  });

  it('takes a registry loader as well as a registry', () => {
    const loader = async () => createRegistry([]);
    expect(checkSiteRunOptions({ ...base, registry: loader }, {}).registry).toBe(loader);
  });
});
