import { EventEmitter } from 'node:events';

/**
 * An abort flag that tells its listeners once, for what a request's own life needs of an
 * AbortController. Node 20 builds an AbortSignal as an EventTarget: with its controller it costs
 * about 5 µs to create and each abort listener several µs more, and a request used two of them
 * (its `get`'s and its hop's) with four listeners. undici takes an EventEmitter as a request's
 * `signal` (it reads `aborted` and `reason` and listens to 'abort'), so this is one.
 */
export class StopSignal extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
    this.removeAllListeners('abort');
  }
}

/** What a wait of the client can give up on: a caller's AbortSignal or a StopSignal. */
export type Stoppable = AbortSignal | StopSignal;

/** Calls `fn` once when `signal` aborts; returns how to stop listening. */
export function onStop(signal: Stoppable, fn: () => void): () => void {
  if (signal instanceof StopSignal) {
    signal.on('abort', fn);
    return () => {
      signal.removeListener('abort', fn);
    };
  }
  signal.addEventListener('abort', fn, { once: true });
  return () => signal.removeEventListener('abort', fn);
}

/** Thrown inside a `get` when its life signal fired; `get` turns it into the right outcome. */
export class Stop extends Error {}
