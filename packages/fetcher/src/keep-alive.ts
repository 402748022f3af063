import type { Socket } from 'node:net';

/** A host name as sockets are opened to it: lower case, an IPv6 literal without its brackets. */
function hostKey(host: string): string {
  const h = host.toLowerCase();
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

/**
 * What an idle socket closed by `closeIdle` ends with. undici takes the error a socket ends with
 * as the reason its connection ended; without one it builds a `SocketError('closed')` (its stack
 * captured, its socket's addresses read) for each. `UND_ERR_INFO` is undici's code for an end
 * that fails no request (there is none on an idle socket). One object for all: nobody reads it.
 */
const CLOSED_IDLE: Error & { code: string } = Object.assign(new Error('idle connection closed'), {
  code: 'UND_ERR_INFO',
});

function closeIdleSocket(socket: Socket): void {
  socket.destroy(CLOSED_IDLE);
}

function closeIfIdle(socket: Socket, a: Adopted): void {
  if (!a.wanted && !socket.destroyed) closeIdleSocket(socket);
}

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
  /** The host name the socket was opened to (lower case, an IPv6 literal without brackets). */
  readonly host: string;
  /** `closeIdle` named its host while it had a request: closed once undici leaves it idle. */
  closeWhenIdle: boolean;
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
  adopt(socket: Socket, host: string): void {
    if (this.#sockets.has(socket)) return;
    const ref = socket.ref;
    const unref = socket.unref;
    const a: Adopted = {
      wanted: true,
      host: hostKey(host),
      closeWhenIdle: false,
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
      // Not from inside undici's call: it goes on using the socket after unref'ing it.
      if (a.closeWhenIdle) setImmediate(() => closeIfIdle(socket, a));
      return socket;
    };
    this.#sockets.set(socket, a);
    socket.once('close', () => this.#sockets.delete(socket));
    if (!this.#refd) a.unref();
  }

  /**
   * Closes the sockets to these host names that undici leaves idle (it unrefs a socket once its
   * last request is done, and refs it again before it writes the next one): those idle now at
   * once, those with a request (a body still being read or drained) once it is done. A socket
   * closed here ends as if the server had closed it: undici opens another one for a later
   * request. Closed without an error, so no stack trace is formatted for it, unlike undici's own
   * idle timeout (an `InformationalError`).
   */
  closeIdle(hosts: Iterable<string>): void {
    const keys = new Set<string>();
    for (const h of hosts) keys.add(hostKey(h));
    if (keys.size === 0 || this.#sockets.size === 0) return;
    for (const [socket, a] of this.#sockets) {
      if (socket.destroyed || !keys.has(a.host)) continue;
      if (a.wanted) a.closeWhenIdle = true;
      else closeIdleSocket(socket);
    }
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
