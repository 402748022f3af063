import type { Worker } from 'node:worker_threads';
import {
  type EncodedPages,
  type PagesSitemapType,
  type ParseDocumentOptions,
  type ParsedDocument,
  UspError,
  type Warning,
} from '@usp-ts/core';
import { decodePages, reviveDates } from '../pages/codec.js';
import { PAGE_RECORDS_FORMAT, recordPages } from '../pages/records.js';
import type { FromWorker, ToWorker } from './protocol.js';

/**
 * How long a worker has to answer an abort before its document is ended without it. It answers
 * between two chunks, a few ms apart even on a loaded machine; this keeps a deadline within about
 * 0.5 s whatever the worker does (issue 14: 5 s late with the worker busy under load).
 */
const ABORT_GRACE_MS = 200;

/**
 * How long a worker's documents all wait for body bytes, with every byte sent read, before
 * another document may join that worker. A slow site keeps it waiting for seconds; a fast one
 * for an event-loop turn (a paused socket resuming, the first bytes of a response), which an
 * immediate check took for starvation: on the 1M-URL site every worker document was joined by
 * the next one 3 ms after it started, so the worker parsed two at a time and the walk ended on
 * a pair (issue 19).
 */
const STARVED_AFTER_MS = 100;

/** A body crosses in pieces this big. */
const PIECE = 65_536;

/** What a job needs of the worker thread it runs on (a pool's `Slot`). */
export interface JobThread {
  readonly worker: Worker | null;
  /** The job is over: the thread forgets it, and may take another document or stop holding the process. */
  release(job: Job): void;
  /** The worker did not stop after an abort: it goes, with the other documents it holds. */
  replace(job: Job): void;
  /** A document waiting for a thread may start now (this one's documents are all starved). */
  wake(): void;
}

/**
 * One document parsed on a worker thread: its body pumped across within `maxBytesInFlight`
 * (the worker's credits), its pages and warnings handed to the caller in order, its abort
 * answered within ABORT_GRACE_MS, and its wait for body bytes watched (a starved job lets its
 * thread take another document).
 */
export class Job {
  readonly id: number;
  readonly opts: ParseDocumentOptions;
  readonly #thread: JobThread;
  readonly #maxInFlight: number;
  readonly #resolve: (d: ParsedDocument) => void;
  readonly #reject: (e: unknown) => void;
  readonly #warnings: Warning[] = [];
  /** Pages handed to `onPages`, and the type the worker gave them: what an abandoned job keeps. */
  #pageCount = 0;
  #pagesType: PagesSitemapType | null = null;
  /** Set once the caller's signal aborted: the worker has this long to answer. */
  #graceTimer: ReturnType<typeof setTimeout> | null = null;
  /** The pump waits for body bytes the source does not have yet. */
  #awaitingBody = false;
  /** ... and the worker has read every byte sent, for STARVED_AFTER_MS: its thread is idle. */
  starved = false;
  /** Counts the body's answers: a starvation check is for the wait it started in. */
  #bodyTurn = 0;
  /** The `bodyTurn` whose wait a starvation check is scheduled for (-1: none yet). */
  #checkTurn = -1;
  #inFlight = 0;
  #creditWaiter: (() => void) | null = null;
  #finished = false;
  #unlisten: (() => void) | null = null;
  /** Messages of one job are handled in order, each after the previous one's onPages. */
  #chain: Promise<void> = Promise.resolve();

  constructor(
    id: number,
    opts: ParseDocumentOptions,
    thread: JobThread,
    maxInFlight: number,
    settle: { resolve(d: ParsedDocument): void; reject(e: unknown): void },
  ) {
    this.id = id;
    this.opts = opts;
    this.#thread = thread;
    this.#maxInFlight = maxInFlight;
    this.#resolve = settle.resolve;
    this.#reject = settle.reject;
  }

  /** A message of the worker about this job. */
  receive(m: FromWorker): void {
    if (m.t === 'credit') {
      this.#inFlight -= m.bytes;
      this.#checkStarved();
      const w = this.#creditWaiter;
      this.#creditWaiter = null;
      w?.();
      return;
    }
    this.#chain = this.#chain
      .then(() => (this.#finished ? undefined : this.#handle(m)))
      .catch((error) => this.fail(error));
  }

  /** Asks the worker to stop at the caller's abort, and gives it ABORT_GRACE_MS to answer. */
  listen(signal: AbortSignal, worker: Worker): void {
    const onAbort = () => {
      worker.postMessage({ t: 'abort', id: this.id } satisfies ToWorker);
      // The worker sees the abort between two steps of its parse; a deadline must not wait
      // for a step that never ends.
      this.#graceTimer = setTimeout(() => this.#abandon(), ABORT_GRACE_MS);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    this.#unlisten = () => signal.removeEventListener('abort', onAbort);
  }

  /** Ends the job with `error` (the worker is told to drop it). */
  fail(error: unknown): void {
    if (this.#finished) return;
    this.#thread.worker?.postMessage({ t: 'cancel', id: this.id } satisfies ToWorker);
    this.#settle();
    this.#reject(error);
  }

  /** Its thread is gone (the worker died, or the pool closed): the job fails with `error`. */
  lost(error: unknown): void {
    this.#finished = true;
    this.#creditWaiter?.();
    this.#reject(error);
  }

  #settle(): void {
    this.#finished = true;
    if (this.#graceTimer !== null) clearTimeout(this.#graceTimer);
    this.#unlisten?.();
    this.#creditWaiter?.();
    this.#thread.release(this);
  }

  #addWarnings(warnings: Warning[]): void {
    for (const w of warnings) {
      this.#warnings.push(w);
      this.opts.onWarning?.(w);
    }
  }

  async #handle(m: Exclude<FromWorker, { t: 'credit' }>): Promise<void> {
    if (m.t === 'pages' || m.t === 'records') {
      this.#addWarnings(m.warnings);
      const pages = m.t === 'records' ? recordPages(m.n, m.records) : decodePages(m.batch);
      this.#pageCount += pages.length;
      this.#pagesType ??= m.type;
      if (this.opts.onPages !== undefined) await this.opts.onPages(pages, m.type, encodedOf(m));
      this.#thread.worker?.postMessage({ t: 'ack', id: this.id } satisfies ToWorker);
      return;
    }
    if (m.t === 'fail') {
      this.fail(new UspError('USP_WORKER', m.message));
      return;
    }
    this.#addWarnings(m.warnings);
    this.#settle();
    this.#resolve({ ...(reviveDates(m.result) as ParsedDocument), warnings: this.#warnings });
  }

  /**
   * The caller aborted and the worker did not answer in time (busy in a long step, or starved on
   * a loaded machine): the job ends here with the pages already handed on, as an in-thread parse
   * ends at an abort, and the worker is replaced, since it may never come back. Queued behind the
   * messages already received, so their pages are kept.
   */
  #abandon(): void {
    this.#chain = this.#chain.then(() => {
      if (this.#finished) return;
      // The worker goes, with any other document it holds (a slow one sharing it); before
      // `settle`, which may place a waiting document on this thread.
      this.#thread.replace(this);
      const url = this.opts.url;
      this.#addWarnings([
        {
          code: 'truncated',
          message: `Parsing was aborted; the parser worker did not stop within ${ABORT_GRACE_MS} ms, what was read before is kept`,
          url,
        },
      ]);
      this.#settle();
      this.#resolve({
        url,
        type: this.#pagesType ?? 'InvalidSitemap',
        reason: this.#pagesType === null ? `Parsing of ${url} was aborted before any page was read` : null,
        children: [],
        warnings: this.#warnings,
        pageCount: this.#pageCount,
        bytes: 0,
        truncated: true,
      });
    });
  }

  /**
   * A slow body (a site sending a few KB at a time) leaves its thread idle, waiting for bytes; a
   * document waiting for a thread may then join it rather than wait, unread, for the slow one to
   * end (issue 14: a third slow urlset delivered nothing until one of the first two had ended).
   * Checked after this turn's I/O (a body with bytes already buffered answers before that), and
   * again until the wait has lasted STARVED_AFTER_MS.
   */
  #checkStarved(): void {
    const turn = this.#bodyTurn;
    if (
      this.#finished ||
      !this.#awaitingBody ||
      this.#inFlight > 0 ||
      this.starved ||
      this.#checkTurn === turn
    )
      return;
    this.#checkTurn = turn;
    const since = Date.now();
    const check = () =>
      setImmediate(() => {
        if (this.#finished || !this.#awaitingBody || this.#inFlight > 0 || this.#bodyTurn !== turn) return;
        const left = since + STARVED_AFTER_MS - Date.now();
        if (left > 0) {
          // Unref'd: the pump's wait for the body is what holds the process.
          setTimeout(check, left).unref();
          return;
        }
        this.starved = true;
        this.#thread.wake();
      });
    check();
  }

  /** Sends the body to `worker` within the credits, then its end (or the error that ended it). */
  async pump(worker: Worker, body: AsyncIterable<Uint8Array> | Uint8Array): Promise<void> {
    if (body instanceof Uint8Array) {
      for (let i = 0; i < body.length && !this.#finished; i += PIECE) {
        await this.#credit();
        if (!this.#finished) this.#send(worker, body.subarray(i, i + PIECE));
      }
      if (!this.#finished) worker.postMessage({ t: 'end', id: this.id } satisfies ToWorker);
      return;
    }
    const it = body[Symbol.asyncIterator]();
    try {
      while (!this.#finished) {
        await this.#credit();
        if (this.#finished) break;
        const pending = it.next();
        this.#awaitingBody = true;
        this.#checkStarved();
        const next = await pending;
        this.#awaitingBody = false;
        this.starved = false;
        this.#bodyTurn++;
        if (next.done) {
          if (!this.#finished) worker.postMessage({ t: 'end', id: this.id } satisfies ToWorker);
          return;
        }
        if (!this.#finished && next.value.length > 0) this.#send(worker, next.value);
      }
      // The parser stopped before the body ended (a limit, an unknown root): stop reading.
      await it.return?.();
    } catch (error) {
      if (this.#finished) return;
      const e = error as { message?: unknown; code?: unknown; name?: unknown };
      worker.postMessage({
        t: 'end',
        id: this.id,
        error: {
          message: typeof e?.message === 'string' ? e.message : String(error),
          ...(typeof e?.code === 'string' ? { code: e.code } : {}),
          ...(typeof e?.name === 'string' ? { name: e.name } : {}),
        },
      } satisfies ToWorker);
    }
  }

  /** Waits while `maxBytesInFlight` bytes are sent and unread. */
  async #credit(): Promise<void> {
    while (this.#inFlight >= this.#maxInFlight && !this.#finished) {
      await new Promise<void>((r) => {
        this.#creditWaiter = r;
      });
    }
  }

  #send(worker: Worker, chunk: Uint8Array): void {
    // A copy we own: the source's buffer may be pooled or reused by the HTTP client.
    const data = new Uint8Array(chunk);
    this.#inFlight += data.length;
    worker.postMessage({ t: 'chunk', id: this.id, data } satisfies ToWorker, [data.buffer]);
  }
}

/** The records a batch of ordinary pages came with, for the temp-file store to copy. */
function encodedOf(m: Extract<FromWorker, { t: 'pages' | 'records' }>): EncodedPages | undefined {
  const records = m.t === 'records' ? m.records : m.batch.records;
  return records === null ? undefined : { format: PAGE_RECORDS_FORMAT, bytes: records };
}
