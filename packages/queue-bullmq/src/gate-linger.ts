/** A host whose slots here are all idle, as the linger sees it. */
export interface LingeringHost {
  readonly name: string;
  /** When every slot held fell idle (`performance.now()`), or -1 while it is not lingering. */
  idleSince: number;
  /** Gives every idle slot back to Redis (and ends its linger). */
  giveBackIdle(yieldSlot: 0 | 1): void;
}

/**
 * The hosts whose slots here have all fallen idle, in the order they did, and the one timer that
 * gives their slots back: after `keepIdleMs` with this process's next ask, or after `maxKeepMs` at
 * the latest (see `keepIdleMs` in redis-gate-options.ts).
 */
export class IdleLinger {
  readonly #keepIdleMs: number;
  readonly #maxKeepMs: number;
  readonly #isClosed: () => boolean;
  readonly #lingering = new Map<string, LingeringHost>();
  #timer: ReturnType<typeof setTimeout> | null = null;

  constructor(keepIdleMs: number, maxKeepMs: number, isClosed: () => boolean) {
    this.#keepIdleMs = keepIdleMs;
    this.#maxKeepMs = maxKeepMs;
    this.#isClosed = isClosed;
  }

  /** The host's slots all fell idle now. */
  start(h: LingeringHost): void {
    h.idleSince = performance.now();
    this.#lingering.set(h.name, h);
    if (this.#timer === null) {
      this.#timer = setTimeout(this.#onTimer, this.#maxKeepMs);
      this.#timer.unref?.();
    }
  }

  /** The host's slots are in use again, or gone back. */
  end(h: LingeringHost): void {
    if (h.idleSince < 0) return;
    h.idleSince = -1;
    this.#lingering.delete(h.name);
  }

  /** Gives back the slots of every host idle for at least `keepIdleMs` (before an ask). */
  giveBackDue(): void {
    this.#giveBack(this.#keepIdleMs);
  }

  #giveBack(minIdleMs: number): void {
    if (this.#lingering.size === 0) return;
    const before = performance.now() - minIdleMs;
    for (const h of this.#lingering.values()) {
      if (h.idleSince > before) break;
      h.giveBackIdle(0);
    }
  }

  readonly #onTimer = (): void => {
    this.#timer = null;
    this.#giveBack(this.#keepIdleMs);
    if (this.#lingering.size === 0 || this.#isClosed()) return;
    const oldest = this.#lingering.values().next().value as LingeringHost;
    const due = Math.max(this.#keepIdleMs, oldest.idleSince + this.#maxKeepMs - performance.now());
    this.#timer = setTimeout(this.#onTimer, due);
    this.#timer.unref?.();
  };

  close(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#lingering.clear();
  }
}
