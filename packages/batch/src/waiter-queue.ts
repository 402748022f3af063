/**
 * Requests waiting for a slot, first come first served, each abortable by its own signal: the
 * queue of a politeness gate. The in-process gate (`hostGate`) and the Redis gate of
 * `@usp-ts/queue-bullmq` keep one per host; what they hand a waiter (a slot's release) and when
 * is theirs, the order and the aborts are this.
 */
export class WaiterQueue<T> {
  readonly #waiters: Waiter<T>[] = [];

  /** Requests waiting. */
  get length(): number {
    return this.#waiters.length;
  }

  /**
   * Joins the queue at its end: the promise resolves with what `resolveFirst` hands this waiter.
   * When `signal` aborts first, the waiter leaves the queue, the promise rejects with the
   * signal's reason, and `onAbort` runs (a gate pumps or forgets its host there). A signal already
   * aborted rejects at once, without joining.
   */
  wait(signal?: AbortSignal, onAbort?: () => void): Promise<T> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<T>((resolve, reject) => {
      const w: Waiter<T> = { resolve, reject, signal, onAbort: null };
      if (signal !== undefined) {
        w.onAbort = () => {
          const i = this.#waiters.indexOf(w);
          if (i >= 0) this.#waiters.splice(i, 1);
          reject(signal.reason);
          onAbort?.();
        };
        signal.addEventListener('abort', w.onAbort, { once: true });
      }
      this.#waiters.push(w);
    });
  }

  /** Hands `value` to the first waiter (it leaves the queue, its signal no longer heard). */
  resolveFirst(value: T): void {
    const w = this.#waiters.shift();
    if (w === undefined) return;
    unlisten(w);
    w.resolve(value);
  }

  /** Fails every waiter with `reason`; the queue is empty afterwards. */
  rejectAll(reason: unknown): void {
    for (const w of this.#waiters.splice(0)) {
      unlisten(w);
      w.reject(reason);
    }
  }
}

interface Waiter<T> {
  readonly resolve: (value: T) => void;
  readonly reject: (reason: unknown) => void;
  readonly signal: AbortSignal | undefined;
  onAbort: (() => void) | null;
}

function unlisten<T>(w: Waiter<T>): void {
  if (w.onAbort !== null) w.signal?.removeEventListener('abort', w.onAbort);
}
