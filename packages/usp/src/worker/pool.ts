import { type ParseDocumentOptions, type ParsedDocument, parseDocument, UspError } from '@usp-ts/core';
import { checkParseDocumentOptions } from '@usp-ts/core/engine';
import { type PoolConfig, resolvePoolConfig, type WorkerParserOptions } from './options.js';
import { Slot, type SlotOwner } from './slot.js';

export { tuneParseWorkers, type WorkerParserOptions } from './options.js';

/**
 * Parses documents in worker threads: hand `parse` to a walk (`walkPages(url, { parse })`) and the
 * sitemaps in flight are parsed on other cores while this thread fetches and hands pages on.
 */
export interface WorkerParser {
  /** Same contract as core's `parseDocument`; the caller's `registry` and `gunzip` apply only to documents parsed in-thread. */
  parse(options: ParseDocumentOptions): Promise<ParsedDocument>;
  /** Ends the worker threads; parses still running fail. The pool is unusable afterwards. */
  close(): Promise<void>;
  /**
   * The default: a worker keeps the process alive while it has a document to parse (so an awaited
   * `parse` always settles), and an idle one never does.
   */
  ref(): void;
  /**
   * From now on no worker keeps the process alive, busy or not; workers started later neither.
   * Parses go on while something else holds the process (a socket, a timer, a `ref()` again),
   * and stop with it when nothing does. For a caller that awaits the pool only at times, such as
   * a walk between two `next()` calls; call `ref()` before awaiting a parse again.
   */
  unref(): void;
  readonly size: number;
}

export function createWorkerParser(options: WorkerParserOptions = {}): WorkerParser {
  return new WorkerPool(resolvePoolConfig(options, false));
}

/**
 * @internal A pool for a walk whose pages go only to the temp-file store (api/tree.ts's trees): a
 * worker's batch of ordinary pages crosses as their records alone, and its page objects are made
 * on this thread only if something reads them (see `recordPages`). In `usp ls`'s default format
 * the pages a worker parsed were cloned URL by URL and rebuilt here only for the store to
 * take their records.
 */
export function createStoringWorkerParser(options: WorkerParserOptions = {}): WorkerParser {
  return new WorkerPool(resolvePoolConfig(options, true));
}

/** A document waiting for a thread. */
interface Waiting {
  /** Starts the document if a thread is free; false when none is. */
  start(): boolean;
  reject(error: unknown): void;
}

/**
 * The pool: small documents and robots.txt in this thread, the rest one a thread (this one up to
 * `callerThreadDocuments`, then the workers' slots), in arrival order when all are busy.
 */
class WorkerPool implements WorkerParser, SlotOwner {
  readonly size: number;
  readonly #config: PoolConfig;
  readonly #slots: Slot[];
  readonly #waiting: Waiting[] = [];
  #callerActive = 0;
  #nextId = 1;
  #closed = false;
  #refd = true;

  constructor(config: PoolConfig) {
    this.#config = config;
    this.size = config.size;
    this.#slots = Array.from({ length: config.size }, () => new Slot(this, config.thread));
  }

  get refd(): boolean {
    return this.#refd;
  }

  // Arrow properties: callers pass `pool.parse` (and the others) on unbound.
  readonly parse = (opts: ParseDocumentOptions): Promise<ParsedDocument> => {
    // Bad options throw exactly as in-thread (InvalidOptionError), checked by core itself.
    if (opts === null || typeof opts !== 'object' || typeof opts.url !== 'string' || opts.url === '') {
      return parseDocument(opts);
    }
    return this.#parse(opts);
  };

  readonly ref = (): void => {
    this.#refd = true;
    for (const slot of this.#slots) slot.applyRef();
  };

  readonly unref = (): void => {
    this.#refd = false;
    for (const slot of this.#slots) slot.applyRef();
  };

  readonly close = async (): Promise<void> => {
    this.#closed = true;
    for (const w of this.#waiting.splice(0))
      w.reject(new UspError('USP_CLOSED', 'The worker parser was closed'));
    await Promise.all(
      this.#slots.map((slot) => slot.close(new UspError('USP_CLOSED', 'The worker parser was closed'))),
    );
  };

  /** Starts waiting documents while threads are free. */
  wake(): void {
    const waiting = this.#waiting;
    while (waiting.length > 0 && !this.#closed) {
      if (!waiting[0].start()) return;
      waiting.shift();
    }
  }

  #parse(opts: ParseDocumentOptions): Promise<ParsedDocument> {
    if (this.#closed) return Promise.reject(new UspError('USP_CLOSED', 'The worker parser is closed'));
    if (opts.signal?.aborted || this.#inline(opts)) return parseDocument(opts);
    try {
      // Refused exactly as in-thread, before anything crosses to a worker.
      checkParseDocumentOptions(opts);
    } catch (error) {
      return Promise.reject(error);
    }
    const started = this.#place(opts);
    if (started !== null) return started;
    // Every thread is busy: the document waits, unread, for the first one to free up. One
    // document per thread keeps the threads' shares even (a worker given three documents at once
    // finishes long after this thread has run dry).
    return new Promise<ParsedDocument>((resolve, reject) => {
      const signal = opts.signal;
      const onAbort = () => {
        const i = this.#waiting.indexOf(entry);
        if (i !== -1) this.#waiting.splice(i, 1);
        parseDocument(opts).then(resolve, reject);
      };
      const entry: Waiting = {
        start: () => {
          const p = this.#place(opts);
          if (p === null) return false;
          signal?.removeEventListener('abort', onAbort);
          p.then(resolve, reject);
          return true;
        },
        reject: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      this.#waiting.push(entry);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Parsed in this thread: a round trip costs more than a small document, and robots.txt rules cannot cross. */
  #inline(opts: ParseDocumentOptions): boolean {
    const inlineBelow = this.#config.inlineBelowBytes;
    const body = opts.body;
    if (typeof body === 'string') return body.length < inlineBelow;
    if (body instanceof Uint8Array) return body.length < inlineBelow;
    let path = '';
    try {
      path = new URL(opts.url).pathname;
    } catch {
      return true;
    }
    if (path.endsWith('/robots.txt')) return true;
    const length = Number(opts.headers?.('content-length') ?? Number.NaN);
    return Number.isFinite(length) && length < inlineBelow;
  }

  /** Starts `opts` on a free thread (this one first, then an idle worker); null when none is free. */
  #place(opts: ParseDocumentOptions): Promise<ParsedDocument> | null {
    if (this.#callerActive < this.#config.callerThreadDocuments) {
      this.#callerActive++;
      return parseDocument(opts).finally(() => {
        this.#callerActive--;
        this.wake();
      });
    }
    const slot = this.#slots.find((s) => s.jobs.size === 0) ?? this.#slots.find((s) => s.idle());
    return slot === undefined ? null : slot.start(this.#nextId++, opts, this.#config.maxBytesInFlight);
  }
}
