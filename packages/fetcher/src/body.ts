import type { Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate, createInflateRaw } from 'node:zlib';
import { classifyNetworkError } from './classify.js';
import { errorCodeOf, WebBodyError, type WebClientError } from './errors.js';
import { GLOBAL_TIMERS, type Timers } from './keep-alive.js';

const noop = () => {};

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

type Event = 'readable' | 'end' | 'error' | 'close' | 'drain';

/** Resolves on the first of `events`; `cancel` detaches the listeners if something else won. */
function nextEvent(
  emitter: NodeJS.EventEmitter,
  events: readonly Event[],
): { promise: Promise<void>; cancel: () => void } {
  let cancel = noop;
  const promise = new Promise<void>((resolve) => {
    const fire = () => {
      cancel();
      resolve();
    };
    for (const e of events) emitter.on(e, fire);
    cancel = () => {
      for (const e of events) emitter.off(e, fire);
    };
  });
  return { promise, cancel };
}

/**
 * Reads a stream chunk by chunk. Unlike the stream's own async iterator it hands out what is
 * still buffered after an error before rethrowing it, so bytes received before a reset count.
 */
async function* pullReadable(stream: Readable): AsyncGenerator<Buffer> {
  while (true) {
    const chunk = stream.read() as Buffer | null;
    if (chunk !== null) {
      yield chunk;
      continue;
    }
    if (stream.errored) throw stream.errored;
    if (stream.readableEnded || stream.destroyed) return;
    await nextEvent(stream, ['readable', 'end', 'error', 'close']).promise;
  }
}

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

export type ContentCoding = 'gzip' | 'deflate' | 'br';

/**
 * The decodings to apply, in order, for a Content-Encoding header; `null` when it names a coding
 * we cannot undo (the body is then passed on as it came, and the document sniffing downstream
 * gets its chance).
 */
export function parseContentEncoding(header: string | null): ContentCoding[] | null {
  if (header === null) return [];
  const codings: ContentCoding[] = [];
  for (const part of header.split(',')) {
    const c = part.trim().toLowerCase();
    if (c === '' || c === 'identity') continue;
    if (c === 'gzip' || c === 'x-gzip') codings.push('gzip');
    else if (c === 'deflate') codings.push('deflate');
    else if (c === 'br') codings.push('br');
    else return null;
  }
  // Applied left to right by the server, so undone right to left.
  return codings.reverse();
}

/** RFC 1950 header check: "deflate" is meant to be zlib-wrapped, but some servers send it raw. */
function looksLikeZlib(b0: number, b1: number): boolean {
  return (b0 & 0x0f) === 8 && b0 >> 4 <= 7 && ((b0 << 8) | b1) % 31 === 0;
}

function createDecoder(coding: ContentCoding, head: Buffer, chunkSize: number): Transform {
  switch (coding) {
    case 'gzip':
      return createGunzip({ chunkSize });
    case 'br':
      return createBrotliDecompress({ chunkSize });
    case 'deflate':
      return head.length >= 2 && !looksLikeZlib(head[0], head[1])
        ? createInflateRaw({ chunkSize })
        : createInflate({ chunkSize });
  }
}

/**
 * Decodes one content coding, pulled by the reader: the decoder only works when output is
 * wanted, so a bomb expands no further than the reader's cap lets it.
 */
async function* decode(
  src: AsyncGenerator<Buffer>,
  coding: ContentCoding,
  chunkSize: number,
  url: string,
  state: BodyState,
): AsyncGenerator<Buffer> {
  let inputDone = false;
  let z: Transform | undefined;
  try {
    // Enough of the head to tell zlib-wrapped deflate from raw deflate.
    const head: Buffer[] = [];
    let headBytes = 0;
    while (headBytes < 2) {
      const r = await src.next();
      if (r.done) {
        inputDone = true;
        break;
      }
      head.push(r.value);
      headBytes += r.value.length;
    }
    // An empty body under a Content-Encoding (a HEAD-like answer, a 204) decodes to nothing.
    if (headBytes === 0) return;
    const headBuf = Buffer.concat(head);
    if (coding === 'gzip' && !(headBuf[0] === 0x1f && headBuf[1] === 0x8b)) {
      // Labelled gzip but not gzip (a misconfigured server): hand the bytes on untouched.
      yield headBuf;
      if (!inputDone) {
        while (true) {
          const r = await src.next();
          if (r.done) break;
          yield r.value;
        }
        inputDone = true;
      }
      return;
    }
    const decoder = createDecoder(coding, headBuf, chunkSize);
    z = decoder;
    decoder.on('error', noop);
    for (const h of head) decoder.write(h);
    if (inputDone) decoder.end();

    let pendingInput: Promise<IteratorResult<Buffer>> | null = null;
    while (true) {
      const out = decoder.read() as Buffer | null;
      if (out !== null) {
        yield out;
        continue;
      }
      if (decoder.errored) {
        // A body cut at the raw cap ends mid-stream on purpose; the cap error is reported instead.
        if (state.rawOverflow) return;
        throw new WebBodyError(
          'USP_DECODING',
          url,
          `Cannot decode Content-Encoding ${coding}: ${decoder.errored.message}`,
          0,
          { cause: decoder.errored },
        );
      }
      if (decoder.readableEnded) return;
      if (!inputDone && !decoder.writableNeedDrain) {
        pendingInput ??= src.next();
        const wake = nextEvent(decoder, ['readable', 'end', 'error', 'close']);
        const r = await Promise.race([pendingInput, wake.promise.then(() => null)]);
        wake.cancel();
        if (r === null) continue;
        pendingInput = null;
        if (r.done) {
          inputDone = true;
          decoder.end();
        } else decoder.write(r.value);
        continue;
      }
      await nextEvent(decoder, ['readable', 'end', 'error', 'close', 'drain']).promise;
    }
  } finally {
    z?.destroy();
    if (!inputDone) await src.return(undefined);
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
