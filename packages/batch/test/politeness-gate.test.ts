import { describe, expect, it } from 'vitest';
import { hostGate } from '../src/politeness-gate.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('hostGate', () => {
  it('lets perHost requests in flight to one host and queues the rest in order', async () => {
    const gate = hostGate({ perHost: 2 });
    const a1 = await gate.acquire('a');
    const a2 = await gate.acquire('a');
    const order: string[] = [];
    const track = (name: string) =>
      gate.acquire('a').then((release) => {
        order.push(name);
        return release;
      });
    const a3 = track('a3');
    const a4 = track('a4');
    await tick();
    expect(order).toEqual([]);
    a1();
    a1(); // a second release of the same slot frees nothing more
    await tick();
    expect(order).toEqual(['a3']);
    a2();
    await tick();
    expect(order).toEqual(['a3', 'a4']);
    (await a3)();
    (await a4)();
  });

  it('never makes another host wait for a busy one', async () => {
    const gate = hostGate({ perHost: 1 });
    const a = await gate.acquire('a');
    const waiting = gate.acquire('a');
    const b = await gate.acquire('b');
    b();
    a();
    (await waiting)();
  });

  it('spaces starts on a host by its crawl delay, capped by maxCrawlDelayMs', async () => {
    const gate = hostGate({ perHost: 4, maxCrawlDelayMs: 40 });
    gate.setCrawlDelay('slow', 60_000);
    const starts: number[] = [];
    // Bounds from before the first start only: a loaded machine may pause us between a grant and
    // our reading of the clock, which shortens a gap between two readings but never this one.
    const before = performance.now();
    const all = [0, 1, 2].map(() =>
      gate.acquire('slow').then((release) => {
        starts.push(performance.now());
        release();
      }),
    );
    await Promise.all(all);
    expect(starts[1] - before).toBeGreaterThanOrEqual(38);
    expect(starts[2] - before).toBeGreaterThanOrEqual(78);
    // The 60 s asked for were cut to the cap.
    expect(starts[2] - starts[0]).toBeLessThan(5_000);
  });

  it('rejects a waiter whose signal aborts and hands its turn on', async () => {
    const gate = hostGate({ perHost: 1 });
    const held = await gate.acquire('a');
    const controller = new AbortController();
    const aborted = gate.acquire('a', controller.signal);
    const after = gate.acquire('a');
    controller.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    held();
    (await after)();
    await expect(gate.acquire('a', AbortSignal.abort(new Error('already')))).rejects.toThrow('already');
  });

  it('checks its options', () => {
    expect(() => hostGate({ perHost: 0 })).toThrow(/perHost/);
    expect(() => hostGate({ maxCrawlDelayMs: -1 })).toThrow(/maxCrawlDelayMs/);
  });
});
