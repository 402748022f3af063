import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { onStop, type StopSignal } from './stop-signal.js';

/** The answer to one request: a body stream only for a 2xx (the one answer whose body is read). */
export interface HopResponse {
  readonly statusCode: number;
  readonly statusText: string;
  readonly headers: Record<string, string | string[] | undefined>;
  /** undici's own body stream for a 2xx; `null` otherwise (the body is drained or dropped here). */
  readonly body: Readable | null;
}

/** undici's body stream class (`lib/api/readable.js`), as `Dispatcher#request` builds it. */
export type BodyReadableClass = new (options: {
  resume: () => void;
  abort: () => void;
  contentType?: string;
  contentLength?: number | null;
  highWaterMark?: number;
}) => Readable;

/** What `hopRequest` needs of undici. */
export interface UndiciInternals {
  readonly BodyReadable: BodyReadableClass;
  readonly parseHeaders: (raw: Buffer[]) => Record<string, string | string[] | undefined>;
}

export interface HopRequestOptions {
  readonly origin: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  /** Aborting it aborts the request (and a 2xx body's socket). */
  readonly signal: StopSignal;
  /** A non-2xx body up to this size is read to its end, keeping its connection. */
  readonly drainLimitBytes: number;
  /** ... within this time; otherwise the connection is dropped. */
  readonly drainTimeoutMs: number;
  /** Told when the answer is over (its connection free again), for requests that wait for one. */
  readonly ends: RequestEnds | null;
}

/** What is told that a request to an origin is over. */
export interface RequestEnds {
  ended(origin: string): void;
}

const noop = () => {};

/**
 * One GET through undici's `dispatch`, for what `Dispatcher#request` gave: the status, the parsed
 * headers and, for a 2xx, undici's own body stream. `request` builds that stream, an async
 * resource and its callback scope for every answer; a batch run with nothing new gets 304s (no
 * body) and 404s, whose bodies nobody reads: here those are drained (up to `drainLimitBytes`,
 * within `drainTimeoutMs`, as `body.dump` did) or dropped without a stream. Rejects with undici's
 * error when no answer came.
 */
export function hopRequest(
  dispatcher: Dispatcher,
  parts: UndiciInternals,
  options: HopRequestOptions,
): Promise<HopResponse> {
  return new Promise<HopResponse>((resolve, reject) => {
    const signal = options.signal;
    let abort: ((reason?: unknown) => void) | null = null;
    let body: Readable | null = null;
    let settled = false;
    let draining = false;
    let drained = 0;
    let drainTimer: ReturnType<typeof setTimeout> | null = null;
    let unlink: (() => void) | null = null;
    /** The answer is over (complete, failed or aborted): nothing left to time. */
    let complete = false;
    const done = (): void => {
      complete = true;
      unlink?.();
      unlink = null;
      if (drainTimer !== null) clearTimeout(drainTimer);
      drainTimer = null;
    };
    const timeDrain = (): void => {
      if (complete) return;
      drainTimer = setTimeout(() => abort?.(new Error('drain timed out')), options.drainTimeoutMs);
    };
    if (!signal.aborted) {
      unlink = onStop(signal, () => {
        if (body !== null) body.destroy(signal.reason as Error);
        else abort?.(signal.reason);
      });
    }
    const handler: Dispatcher.DispatchHandler = {
      onConnect(abortRequest: (reason?: unknown) => void) {
        if (signal.aborted) {
          abortRequest(signal.reason);
          return;
        }
        abort = abortRequest;
      },
      onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string) {
        if (statusCode < 200) return true;
        const headers = parts.parseHeaders(rawHeaders);
        settled = true;
        if (statusCode >= 300) {
          draining = true;
          // A 304 has no body (the parser knows): nothing to time. Another's body usually came
          // with its head, and undici completes it in the same read: the timer is set after that
          // read, and only when the body is still coming (a timer set and cleared at once was ~2 µs
          // of every 404 a walk's probes get).
          if (statusCode !== 304) queueMicrotask(timeDrain);
          resolve({ statusCode, statusText, headers, body: null });
          return true;
        }
        const length = headers['content-length'];
        const contentType = headers['content-type'];
        body = new parts.BodyReadable({
          resume,
          abort: () => abort?.(),
          // undici's own `request` passes `undefined` for an absent Content-Type too.
          contentType: typeof contentType === 'string' ? contentType : undefined,
          contentLength: typeof length === 'string' ? Number(length) : null,
        });
        body.on('close', done);
        resolve({ statusCode, statusText, headers, body });
        return true;
      },
      onData(chunk: Buffer) {
        if (draining) {
          drained += chunk.length;
          if (drained > options.drainLimitBytes) abort?.(new Error('drain limit'));
          return true;
        }
        return body?.push(chunk) ?? true;
      },
      onComplete() {
        options.ends?.ended(options.origin);
        if (body !== null) body.push(null);
        else done();
      },
      onError(err: Error) {
        options.ends?.ended(options.origin);
        if (!settled) {
          settled = true;
          done();
          reject(err);
          return;
        }
        if (body !== null) {
          const b = body;
          // As `Dispatcher#request`: handlers already queued run before the stream errors.
          queueMicrotask(() => b.on('error', noop).destroy(err));
        } else done();
      },
    } as Dispatcher.DispatchHandler;
    try {
      dispatcher.dispatch(
        { origin: options.origin, path: options.path, method: 'GET', headers: options.headers },
        handler,
      );
    } catch (err) {
      done();
      reject(err);
    }
  });
}
