import type { Socket } from 'node:net';

/** Timer functions, so a client can hand its own (ref-aware) ones to the helpers it uses. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const GLOBAL_TIMERS: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

interface Adopted {
  /** What undici last asked for: ref'd while it has requests on the socket, unref'd when idle. */
  wanted: boolean;
  ref(): void;
  unref(): void;
}

/**
 * Whether the handles of one client (its sockets and timers) may keep the process alive.
 * Ref'd (the default), everything behaves as plain undici: a socket holds the event loop while it
 * has requests, and timers hold it until they fire. Unref'd, none of them does, whatever undici
 * asks of its sockets meanwhile; ref'ing again restores what undici last asked for.
 */
export class KeepAlive implements Timers {
  #refd = true;
  readonly #sockets = new Map<Socket, Adopted>();
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();

  ref(): void {
    if (this.#refd) return;
    this.#refd = true;
    for (const [socket, a] of this.#sockets) if (a.wanted && !socket.destroyed) a.ref();
    for (const t of this.#timers) t.ref();
  }

  unref(): void {
    if (!this.#refd) return;
    this.#refd = false;
    for (const [socket, a] of this.#sockets) if (!socket.destroyed) a.unref();
    for (const t of this.#timers) t.unref();
  }

  /**
   * Takes over a socket's ref()/unref(), right after it is created: undici's calls are recorded
   * and applied only while this is ref'd. Sockets have their handle from creation (also while
   * resolving and connecting), so the state applies at once.
   */
  adopt(socket: Socket): void {
    if (this.#sockets.has(socket)) return;
    const ref = socket.ref;
    const unref = socket.unref;
    const a: Adopted = {
      wanted: true,
      ref: () => ref.call(socket),
      unref: () => unref.call(socket),
    };
    socket.ref = () => {
      a.wanted = true;
      if (this.#refd) a.ref();
      return socket;
    };
    socket.unref = () => {
      a.wanted = false;
      a.unref();
      return socket;
    };
    this.#sockets.set(socket, a);
    socket.once('close', () => this.#sockets.delete(socket));
    if (!this.#refd) a.unref();
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const t = setTimeout(() => {
      this.#timers.delete(t);
      fn();
    }, ms);
    if (!this.#refd) t.unref();
    this.#timers.add(t);
    return t;
  }

  clearTimeout(handle: unknown): void {
    const t = handle as ReturnType<typeof setTimeout>;
    clearTimeout(t);
    this.#timers.delete(t);
  }
}
