import { GLOBAL_TIMERS, type Timers } from './keep-alive.js';

/**
 * A time budget that only runs while someone waits on the network. Time a reader spends not
 * reading is not charged, so a slow consumer is never cut off, while a server that drips a
 * byte at a time runs the budget down whatever its per-read timing.
 */
export class TimeBudget {
  private remaining: number;
  private startedAt = 0;
  private timer: unknown;

  constructor(
    readonly totalMs: number,
    private readonly timers: Timers = GLOBAL_TIMERS,
  ) {
    this.remaining = totalMs;
  }

  run(onExpire: () => void): void {
    if (this.timer !== undefined) return;
    this.startedAt = performance.now();
    this.timer = this.timers.setTimeout(
      () => {
        this.timer = undefined;
        this.remaining = 0;
        onExpire();
      },
      Math.max(0, this.remaining),
    );
  }

  pause(): void {
    if (this.timer === undefined) return;
    this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.remaining -= performance.now() - this.startedAt;
  }
}
