/**
 * The walk's concurrency limit: a first-in first-out counting semaphore whose waiters are
 * released (with `false`) when the walk stops, so nothing queued is fetched after a stop.
 */
export class Slots {
  #free: number;
  readonly #waiters: ((ok: boolean) => void)[] = [];
  constructor(n: number) {
    this.#free = n;
  }
  get waiting(): number {
    return this.#waiters.length;
  }
  acquire(): Promise<boolean> | boolean {
    if (this.#free > 0) {
      this.#free--;
      return true;
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
  release(): void {
    const next = this.#waiters.shift();
    if (next !== undefined) next(true);
    else this.#free++;
  }
  /** Wakes every waiter with `false`: they give up without taking a slot. */
  drain(): void {
    for (const w of this.#waiters.splice(0)) w(false);
  }
}
