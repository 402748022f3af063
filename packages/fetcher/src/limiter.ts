import { GLOBAL_TIMERS, type Timers } from './keep-alive.js';
import { onStop, type Stoppable } from './stop-signal.js';

/** Called once to give a slot back; further calls do nothing. */
export type Release = () => void;

interface Waiter {
  grant: (release: Release) => void;
  fail: (err: unknown) => void;
}

/** A counting semaphore whose waiters can give up through a signal. FIFO, so nobody starves. */
export class Semaphore {
  private free: number;
  private readonly queue: Waiter[] = [];

  constructor(readonly size: number) {
    this.free = size;
  }

  get idle(): boolean {
    return this.free === this.size && this.queue.length === 0;
  }

  /** A slot now when one is free (nobody waits then), else `null`: no promise on the usual path. */
  tryAcquire(): Release | null {
    if (this.free === 0) return null;
    this.free--;
    return this.releaser();
  }

  acquire(signal?: Stoppable): Promise<Release> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.free > 0) {
      this.free--;
      return Promise.resolve(this.releaser());
    }
    return new Promise<Release>((resolve, reject) => {
      let unlink: (() => void) | undefined;
      const waiter: Waiter = {
        grant: (release) => {
          unlink?.();
          resolve(release);
        },
        fail: reject,
      };
      this.queue.push(waiter);
      if (signal !== undefined) {
        unlink = onStop(signal, () => {
          const i = this.queue.indexOf(waiter);
          if (i >= 0) this.queue.splice(i, 1);
          reject(signal.reason);
        });
      }
    });
  }

  private releaser(): Release {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.queue.shift();
      if (next) next.grant(this.releaser());
      else this.free++;
    };
  }
}

/** One semaphore per key (host), dropped again when idle so the map does not grow with every host seen. */
export class KeyedSemaphore {
  private readonly byKey = new Map<string, Semaphore>();

  constructor(private readonly size: number) {}

  async acquire(key: string, signal?: Stoppable): Promise<Release> {
    const s = this.semaphoreOf(key);
    return this.dropWhenIdle(key, s, await s.acquire(signal));
  }

  /** A slot for `key` now when one is free, else `null` (see `Semaphore.tryAcquire`). */
  tryAcquire(key: string): Release | null {
    const s = this.semaphoreOf(key);
    const release = s.tryAcquire();
    if (release === null) return null;
    return this.dropWhenIdle(key, s, release);
  }

  private semaphoreOf(key: string): Semaphore {
    let sem = this.byKey.get(key);
    if (sem === undefined) {
      sem = new Semaphore(this.size);
      this.byKey.set(key, sem);
    }
    return sem;
  }

  private dropWhenIdle(key: string, s: Semaphore, release: Release): Release {
    return () => {
      release();
      if (s.idle && this.byKey.get(key) === s) this.byKey.delete(key);
    };
  }
}

/** Spaces request starts to one host at least `delayMs` apart (measured start to start). */
export class HostSpacing {
  private readonly nextStart = new Map<string, number>();

  constructor(
    private readonly delayMs: number,
    private readonly timers: Timers = GLOBAL_TIMERS,
  ) {}

  /** Whether requests start with no spacing at all (then `wait` never waits). */
  get none(): boolean {
    return this.delayMs <= 0;
  }

  /** Reserves the next start slot for `host` and waits for it. */
  async wait(host: string, signal?: Stoppable): Promise<void> {
    if (this.delayMs <= 0) return;
    const now = Date.now();
    for (const [k, t] of this.nextStart) if (t + this.delayMs < now) this.nextStart.delete(k);
    const start = Math.max(now, this.nextStart.get(host) ?? 0);
    this.nextStart.set(host, start + this.delayMs);
    if (start > now) await sleep(start - now, signal, this.timers);
  }
}

/** A timer that rejects with the signal's reason when it aborts and keeps no timer alive after. */
export function sleep(ms: number, signal?: Stoppable, timers: Timers = GLOBAL_TIMERS): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    let unlink: (() => void) | undefined;
    const timer = timers.setTimeout(() => {
      unlink?.();
      resolve();
    }, ms);
    if (signal !== undefined) {
      unlink = onStop(signal, () => {
        timers.clearTimeout(timer);
        reject(signal.reason);
      });
    }
  });
}
