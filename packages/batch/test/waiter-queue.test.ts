import { describe, expect, it } from 'vitest';
import { WaiterQueue } from '../src/waiter-queue.js';

/** How each waiter's promise settled, in the order they did. */
function record<T>(settled: string[], name: string, p: Promise<T>): void {
  p.then(
    (v) => settled.push(`${name}=${String(v)}`),
    (e) => settled.push(`${name}!${e instanceof Error ? e.message : String(e)}`),
  );
}

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('WaiterQueue', () => {
  it('hands values to the waiters first come first served', async () => {
    const q = new WaiterQueue<number>();
    const settled: string[] = [];
    record(settled, 'a', q.wait());
    record(settled, 'b', q.wait());
    record(settled, 'c', q.wait());
    expect(q.length).toBe(3);
    q.resolveFirst(1);
    q.resolveFirst(2);
    await tick();
    expect(settled).toEqual(['a=1', 'b=2']);
    expect(q.length).toBe(1);
    q.resolveFirst(3);
    q.resolveFirst(4); // nobody waits: dropped
    await tick();
    expect(settled).toEqual(['a=1', 'b=2', 'c=3']);
    expect(q.length).toBe(0);
  });

  it('an aborted waiter leaves the queue with the reason, and the hook runs after it left', async () => {
    const q = new WaiterQueue<number>();
    const settled: string[] = [];
    const ac = new AbortController();
    const lengths: number[] = [];
    record(settled, 'a', q.wait());
    record(
      settled,
      'b',
      q.wait(ac.signal, () => lengths.push(q.length)),
    );
    record(settled, 'c', q.wait());
    ac.abort(new Error('gone'));
    expect(lengths).toEqual([2]);
    q.resolveFirst(1);
    q.resolveFirst(2);
    await tick();
    expect(settled).toEqual(['b!gone', 'a=1', 'c=2']);
  });

  it('a waiter served no longer hears its signal; an aborted signal never joins', async () => {
    const q = new WaiterQueue<number>();
    const settled: string[] = [];
    const ac = new AbortController();
    let hooks = 0;
    record(
      settled,
      'a',
      q.wait(ac.signal, () => hooks++),
    );
    q.resolveFirst(7);
    ac.abort(new Error('late'));
    const before = new AbortController();
    before.abort(new Error('early'));
    record(
      settled,
      'b',
      q.wait(before.signal, () => hooks++),
    );
    await tick();
    expect(settled).toEqual(['a=7', 'b!early']);
    expect(hooks).toBe(0);
    expect(q.length).toBe(0);
  });

  it('rejectAll fails every waiter and empties the queue; their signals are let go', async () => {
    const q = new WaiterQueue<number>();
    const settled: string[] = [];
    const ac = new AbortController();
    let hooks = 0;
    record(settled, 'a', q.wait());
    record(
      settled,
      'b',
      q.wait(ac.signal, () => hooks++),
    );
    q.rejectAll(new Error('closed'));
    expect(q.length).toBe(0);
    ac.abort(new Error('after'));
    await tick();
    expect(settled).toEqual(['a!closed', 'b!closed']);
    expect(hooks).toBe(0);
  });
});
