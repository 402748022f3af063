import type { Readable } from 'node:stream';
import { classifyNetworkError } from './classify.js';
import { type ContentCoding, decode } from './content-coding.js';
import { errorCodeOf, WebBodyError, type WebClientError } from './errors.js';
import { pullReadable } from './stream-events.js';
import type { TimeBudget } from './time-budget.js';

const noop = () => {};

export interface BodyState {
  rawBytes: number;
  rawOverflow: boolean;
}

async function* capRaw(raw: Readable, maxBytes: number, state: BodyState): AsyncGenerator<Buffer> {
  for await (const chunk of pullReadable(raw)) {
    state.rawBytes += chunk.length;
    if (state.rawBytes > maxBytes) {
      const keep = chunk.length - (state.rawBytes - maxBytes);
      if (keep > 0) yield chunk.subarray(0, keep);
      state.rawOverflow = true;
      // Closing the stream aborts the request: nothing past the cap crosses the wire into memory.
      raw.destroy();
      return;
    }
    yield chunk;
  }
}

export interface BodyOptions {
  readonly url: string;
  readonly raw: Readable;
  readonly codings: readonly ContentCoding[];
  readonly maxBodyBytes: number;
  readonly maxDecodedBytes: number;
  readonly zlibChunkBytes: number;
  readonly budget: TimeBudget;
  /** Aborts the underlying request (and with it the socket). */
  readonly abortRequest: (reason: unknown) => void;
  /** Called exactly once, when the body is finished for whatever reason. */
  readonly onSettle: () => void;
}

interface Pending {
  resolve: (r: IteratorResult<Uint8Array>) => void;
  reject: (e: unknown) => void;
  settled: Promise<unknown>;
}

/**
 * A response body: decoded, capped, with a wait-time budget, and able to be failed from outside
 * (abort, client close, cancel) even while a read is in flight.
 */
export class ResponseBody implements AsyncIterable<Uint8Array> {
  private readonly opts: BodyOptions;
  private readonly state: BodyState = { rawBytes: 0, rawOverflow: false };
  private readonly inner: AsyncGenerator<Buffer>;
  private iterated = false;
  private finished = false;
  private failure: Error | null = null;
  private pending: Pending | null = null;
  private delivered = 0;

  constructor(opts: BodyOptions) {
    this.opts = opts;
    opts.raw.on('error', noop);
    this.inner = this.produce();
  }

  /** Raw (wire) bytes received so far. */
  get rawBytes(): number {
    return this.state.rawBytes;
  }

  private async *produce(): AsyncGenerator<Buffer> {
    const { url, maxBodyBytes, maxDecodedBytes } = this.opts;
    let stream: AsyncGenerator<Buffer> = capRaw(this.opts.raw, maxBodyBytes, this.state);
    for (const c of this.opts.codings) stream = decode(stream, c, this.opts.zlibChunkBytes, url, this.state);
    const rawCap = () =>
      new WebBodyError(
        'USP_TOO_LARGE',
        url,
        `Response body exceeds maxBodyBytes (${maxBodyBytes} bytes); the rest was not downloaded`,
        this.delivered,
      );
    let decoded = 0;
    try {
      for await (const chunk of stream) {
        decoded += chunk.length;
        if (decoded > maxDecodedBytes) {
          const keep = chunk.length - (decoded - maxDecodedBytes);
          if (keep > 0) yield chunk.subarray(0, keep);
          throw new WebBodyError(
            'USP_TOO_LARGE',
            url,
            `Decoded response body exceeds maxDecodedBytes (${maxDecodedBytes} bytes)`,
            this.delivered,
          );
        }
        yield chunk;
      }
    } catch (e) {
      if (this.state.rawOverflow && !(e instanceof WebBodyError && e.code === 'USP_TOO_LARGE'))
        throw rawCap();
      throw e;
    }
    if (this.state.rawOverflow) throw rawCap();
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    if (this.iterated) throw new TypeError('A response body can be iterated only once');
    this.iterated = true;
    return {
      next: () => this.next(),
      return: async () => {
        this.cancel();
        return { done: true, value: undefined };
      },
    };
  }

  private next(): Promise<IteratorResult<Uint8Array>> {
    if (this.failure !== null) {
      const f = this.failure;
      this.failure = null;
      return Promise.reject(f);
    }
    if (this.finished) return Promise.resolve({ done: true, value: undefined });
    if (this.pending !== null) {
      // Reads are sequential: a read issued while one is in flight waits for it.
      const inFlight = this.pending.settled;
      return inFlight.then(() => this.next());
    }
    let mine!: Pending;
    const result = new Promise<IteratorResult<Uint8Array>>((resolve, reject) => {
      mine = { resolve, reject, settled: Promise.resolve() };
    });
    mine.settled = result.then(noop, noop);
    this.pending = mine;
    this.opts.budget.run(() =>
      this.fail(
        new WebBodyError(
          'USP_TIMEOUT',
          this.opts.url,
          `Request timed out: requestTimeoutMs (${this.opts.budget.totalMs} ms) spent waiting for the response`,
          this.delivered,
        ),
      ),
    );
    this.inner.next().then(
      (r) => {
        this.opts.budget.pause();
        if (this.pending !== mine) return;
        this.pending = null;
        if (r.done) {
          this.settle();
          mine.resolve({ done: true, value: undefined });
        } else {
          this.delivered += r.value.length;
          mine.resolve({ done: false, value: r.value });
        }
      },
      (e: unknown) => {
        this.opts.budget.pause();
        if (this.pending !== mine) return;
        this.pending = null;
        this.settle();
        mine.reject(this.toBodyError(e));
      },
    );
    return result;
  }

  private toBodyError(e: unknown): Error {
    if (e instanceof WebBodyError) {
      return e.bytesDelivered === this.delivered
        ? e
        : new WebBodyError(e.code, e.url, e.message, this.delivered, { cause: e.cause });
    }
    const c = classifyNetworkError(e);
    const message = c.code === 'connection' ? `Response body broke off: ${c.message}` : c.message;
    return new WebBodyError(errorCodeOf(c.code), this.opts.url, message, this.delivered, { cause: e });
  }

  /**
   * Ends the body from outside. `null` ends it quietly (cancel); an error rejects the read in
   * flight, or the next one.
   */
  fail(err: WebClientError | null): void {
    if (this.finished) return;
    const p = this.pending;
    this.pending = null;
    this.settle();
    this.opts.abortRequest(err ?? new Error('cancelled'));
    if (p !== null) {
      if (err === null) p.resolve({ done: true, value: undefined });
      else p.reject(err);
    } else if (err !== null) {
      this.failure = err;
    }
  }

  cancel(): void {
    this.fail(null);
  }

  private settle(): void {
    if (this.finished) return;
    this.finished = true;
    this.opts.budget.pause();
    this.opts.raw.destroy();
    // Runs the generators' cleanup (decoders destroyed) once the read in flight, if any, settles.
    this.inner.return(undefined).catch(noop);
    this.opts.onSettle();
  }
}
