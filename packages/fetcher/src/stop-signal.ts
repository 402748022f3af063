/** What `StopSignal` calls its listeners with: nothing (they read `aborted` and `reason`). */
type Listener = () => void;

/**
 * An abort flag that tells its listeners once, for what a request's own life needs of an
 * AbortController. Node 20 builds an AbortSignal as an EventTarget: with its controller it costs
 * about 5 µs to create and each abort listener several µs more, and a request used two of them
 * (its `get`'s and its hop's) with four listeners. undici takes an EventEmitter-like object as a
 * request's `signal` (it reads `aborted` and `reason` and calls `once`/`on` and `removeListener`
 * with 'abort'), so this has those methods and nothing else: an EventEmitter's constructor, its
 * per-event bookkeeping and its listener checks were ~1.5 µs more a request, for one event that
 * a request's two signals, each with one or two listeners, never need.
 */
export class StopSignal {
  aborted = false;
  reason: unknown = undefined;
  /** One listener (the usual case) without an array, more in one. */
  #listeners: Listener | Listener[] | null = null;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const l = this.#listeners;
    this.#listeners = null;
    if (l === null) return;
    if (typeof l === 'function') {
      l();
      return;
    }
    for (const fn of l) fn();
  }

  /** Listens for 'abort' (the only event); a listener added after the abort is never called. */
  on(event: 'abort', fn: Listener): this {
    if (event !== 'abort' || this.aborted) return this;
    const l = this.#listeners;
    if (l === null) this.#listeners = fn;
    else if (typeof l === 'function') this.#listeners = [l, fn];
    else l.push(fn);
    return this;
  }

  /** As `on`: an abort happens once. */
  once(event: 'abort', fn: Listener): this {
    return this.on(event, fn);
  }

  addListener(event: 'abort', fn: Listener): this {
    return this.on(event, fn);
  }

  removeListener(event: 'abort', fn: Listener): this {
    const l = this.#listeners;
    if (event !== 'abort' || l === null) return this;
    if (l === fn) this.#listeners = null;
    else if (typeof l !== 'function') {
      const i = l.lastIndexOf(fn);
      if (i >= 0) l.splice(i, 1);
    }
    return this;
  }

  /** Listeners waiting for the abort now (tests). */
  listenerCount(event: 'abort'): number {
    const l = this.#listeners;
    if (event !== 'abort' || l === null) return 0;
    return typeof l === 'function' ? 1 : l.length;
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

/** A caller's signal as a client listens to it: one listener for what waits on it. */
interface Watch {
  readonly fns: Set<() => void>;
  readonly listener: () => void;
}

/**
 * The callers' AbortSignals, each with one listener of the client while anything of the client
 * waits on it. A batch walk hands every request of a site the site's signal, two at a time, and
 * each request listened to it twice (its `get`, and its body with a once-listener, about three
 * times dearer to add and remove on Node's EventTarget): several µs a request. Here a request
 * adds itself to a Set, and the signal gets a listener only when the Set was empty (the last one
 * out removes it, so nothing is left on a signal that outlives the client's requests). Each
 * signal's functions run in the order they were added.
 */
export class CallerSignals {
  readonly #watched = new WeakMap<AbortSignal, Watch>();

  /** Calls `fn` once when `signal` aborts (never when it already has); returns how to stop. */
  on(signal: AbortSignal, fn: () => void): () => void {
    let w = this.#watched.get(signal);
    if (w === undefined) {
      const fns = new Set<() => void>();
      const listener = () => {
        this.#watched.delete(signal);
        const all = [...fns];
        fns.clear();
        for (const f of all) f();
      };
      w = { fns, listener };
      this.#watched.set(signal, w);
      signal.addEventListener('abort', listener);
    }
    const watch = w;
    watch.fns.add(fn);
    return () => {
      if (!watch.fns.delete(fn) || watch.fns.size > 0) return;
      signal.removeEventListener('abort', watch.listener);
      if (this.#watched.get(signal) === watch) this.#watched.delete(signal);
    };
  }
}
