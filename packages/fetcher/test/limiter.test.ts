import { afterEach, describe, expect, it, vi } from 'vitest';
import { HostSpacing, KeyedSemaphore, Semaphore, sleep } from '../src/limiter.js';
import { backoffDelay, parseRetryAfter } from '../src/retry.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('HostSpacing', () => {
  it('spaces starts to one host by the delay, other hosts unaffected', async () => {
    vi.useFakeTimers({ now: 0 });
    const spacing = new HostSpacing(100);
    const started: Array<[string, number]> = [];
    const go = (host: string) => spacing.wait(host).then(() => started.push([host, Date.now()]));
    const all = Promise.all([go('a'), go('a'), go('b'), go('a')]);
    await vi.advanceTimersByTimeAsync(1000);
    await all;
    expect(started).toEqual([
      ['a', 0],
      ['b', 0],
      ['a', 100],
      ['a', 200],
    ]);
  });

  it('gives up its wait when the signal aborts', async () => {
    vi.useFakeTimers({ now: 0 });
    const spacing = new HostSpacing(1000);
    await spacing.wait('a');
    const ctl = new AbortController();
    const p = spacing.wait('a', ctl.signal);
    ctl.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
  });
});

describe('Semaphore', () => {
  it('grants in order and releases once per holder', async () => {
    const sem = new Semaphore(1);
    const r1 = await sem.acquire();
    const order: number[] = [];
    const p2 = sem.acquire().then((r) => {
      order.push(2);
      return r;
    });
    const p3 = sem.acquire().then((r) => {
      order.push(3);
      return r;
    });
    r1();
    r1();
    const r2 = await p2;
    expect(order).toEqual([2]);
    r2();
    (await p3)();
    expect(order).toEqual([2, 3]);
    expect(sem.idle).toBe(true);
  });

  it('drops a waiter whose signal aborts', async () => {
    const sem = new Semaphore(1);
    const r1 = await sem.acquire();
    const ctl = new AbortController();
    const waiting = sem.acquire(ctl.signal);
    ctl.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    r1();
    expect(sem.idle).toBe(true);
  });

  it('KeyedSemaphore forgets idle hosts', async () => {
    const keyed = new KeyedSemaphore(1);
    const release = await keyed.acquire('a');
    release();
    expect((keyed as unknown as { byKey: Map<string, unknown> }).byKey.size).toBe(0);
  });

  it('tryAcquire takes a free slot at once, gives null when none is free, and never jumps the queue', async () => {
    const s = new Semaphore(1);
    const a = s.tryAcquire();
    expect(a).not.toBeNull();
    expect(s.tryAcquire()).toBeNull();
    const waiting = s.acquire();
    a?.();
    // The slot went to the waiter: still nothing free.
    expect(s.tryAcquire()).toBeNull();
    (await waiting)();
    const b = s.tryAcquire();
    expect(b).not.toBeNull();
    b?.();
    expect(s.idle).toBe(true);
  });

  it('KeyedSemaphore.tryAcquire is per key and forgets the key once idle', () => {
    const k = new KeyedSemaphore(1);
    const a = k.tryAcquire('a');
    expect(a).not.toBeNull();
    expect(k.tryAcquire('a')).toBeNull();
    const b = k.tryAcquire('b');
    expect(b).not.toBeNull();
    a?.();
    b?.();
    expect((k as unknown as { byKey: Map<string, unknown> }).byKey.size).toBe(0);
    expect(new HostSpacing(0).none).toBe(true);
    expect(new HostSpacing(5).none).toBe(false);
  });

  it('sleep rejects at once on an aborted signal', async () => {
    await expect(sleep(10_000, AbortSignal.abort(new Error('now')))).rejects.toThrow('now');
  });
});

describe('retry timing', () => {
  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(null, now)).toBeNull();
    expect(parseRetryAfter('-5', now)).toBeNull();
    expect(parseRetryAfter('1.5', now)).toBeNull();
    expect(parseRetryAfter('soon', now)).toBeNull();
  });

  it('backs off exponentially with jitter, up to the cap', () => {
    expect(backoffDelay(1, 1000, 30_000, () => 0)).toBe(500);
    expect(backoffDelay(1, 1000, 30_000, () => 1)).toBe(1000);
    expect(backoffDelay(3, 1000, 30_000, () => 0.5)).toBe(3000);
    expect(backoffDelay(10, 1000, 30_000, () => 1)).toBe(30_000);
    expect(backoffDelay(10, 1000, 30_000, () => 0)).toBe(15_000);
  });
});
