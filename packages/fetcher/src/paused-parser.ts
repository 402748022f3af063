import { createRequire } from 'node:module';
import type { Socket } from 'node:net';

const require = createRequire(import.meta.url);

/** What the guard reads and calls of undici's HTTP/1 parser (`lib/dispatcher/client-h1.js`). */
interface H1Parser {
  paused: boolean;
  ptr: unknown;
  statusCode: number;
  shouldKeepAlive: boolean;
  llhttp: { llhttp_resume(ptr: unknown): void };
  execute(chunk: Buffer): void;
}

/** The keys undici stores a socket's parser and its error under. */
interface SocketKeys {
  readonly parser: symbol;
  readonly error: symbol;
}

const EMPTY = Buffer.alloc(0);

let keys: SocketKeys | null | undefined;

function socketKeys(): SocketKeys | null {
  if (keys !== undefined) return keys;
  keys = null;
  try {
    const s = require('undici/lib/core/symbols.js') as { kParser?: unknown; kError?: unknown };
    if (typeof s.kParser === 'symbol' && typeof s.kError === 'symbol')
      keys = { parser: s.kParser, error: s.kError };
  } catch {
    // An undici whose files moved: no guard (a newer undici has the fix itself).
  }
  return keys;
}

/**
 * undici 7 (up to 7.30 at least) crashes the process with an uncatchable
 * `AssertionError: assert(!this.paused)` when a connection the server closes (`Connection:
 * close`, HTTP/1.0) ends while a response body is paused by backpressure (a slow reader, such
 * as a walk decompressing a large gzipped sitemap): the socket's `end` handler asks the paused
 * parser to finish (nodejs/undici#5360). undici 8 fixes it in `Parser.finish` (nodejs/undici#5389
 * and #5474), but needs Node 22.19. This does what that fix does, on each of our sockets and
 * before undici's own handler: the parser is resumed and fed what the socket still holds (its
 * body then takes the bytes past its high-water mark, which are in memory already), so that
 * undici's `finish` finds it running and completes, or fails, the response as usual.
 */
export function guardPausedParser(socket: Socket): void {
  if (socketKeys() === null) return;
  socket.prependListener('end', onEnd);
  // The same two calls of \`finish\` on a reset (undici's macOS case) and on a close without error.
  socket.prependListener('error', onError);
  socket.prependListener('close', onClose);
}

// Listeners shared by every socket (\`this\` is the socket): no closures per connection.
function onEnd(this: Socket): void {
  resumeToFinish(this);
}

function onError(this: Socket, err: Error & { code?: string }): void {
  if (err.code === 'ECONNRESET') resumeToFinish(this);
}

function onClose(this: Socket): void {
  if (keys && !(this as unknown as Record<symbol, unknown>)[keys.error]) resumeToFinish(this);
}

function resumeToFinish(socket: Socket): void {
  if (!keys) return;
  const p = (socket as unknown as Record<symbol, H1Parser | null | undefined>)[keys.parser];
  // undici calls `finish` only for a response whose end the connection's end marks.
  if (p == null || !p.paused || p.ptr == null || !p.statusCode || p.shouldKeepAlive) return;
  let data: Buffer;
  do {
    p.llhttp.llhttp_resume(p.ptr);
    p.paused = false;
    data = (socket.read() as Buffer | null) ?? EMPTY;
    p.execute(data);
  } while (p.paused && data.length > 0);
  // A body without a length pauses again on its last bytes: the end of the connection ends it.
  if (p.paused) {
    p.llhttp.llhttp_resume(p.ptr);
    p.paused = false;
  }
}
