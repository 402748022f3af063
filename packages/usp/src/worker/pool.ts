import { availableParallelism } from 'node:os';
import { type ResourceLimits, Worker } from 'node:worker_threads';
import {
  checkParseDocumentOptions,
  InvalidOptionError,
  type PagesSitemapType,
  type ParseDocumentOptions,
  type ParsedDocument,
  parseDocument,
  rejectUnknownOptions,
  UspError,
  type Warning,
} from '@usp-ts/core';
import { decodePages, reviveDates } from '../pages/codec.js';
import { recordPages } from '../pages/records.js';
import { FORWARDED_HEADERS, type FromWorker, type ToWorker } from './protocol.js';

export interface WorkerParserOptions {
  /** Worker threads (default: `min(2, os.availableParallelism())`). */
  workers?: number;
  /**
   * Documents announced (Content-Length) or given (string, bytes) smaller than this, and every
   * robots.txt, are parsed in the calling thread with the caller's registry: a round trip costs
   * more than they do, and robots.txt rules are functions that cannot cross threads. Default 65536.
   */
  inlineBelowBytes?: number;
  /**
   * Module the workers import for their formats: it must export `createRegistry(): Registry`.
   * Default: this package's `createDefaultRegistry`. The caller's `registry` object cannot be
   * sent to another thread, so a custom registry needs this.
   */
  registryModule?: string | URL;
  /**
   * Plugin modules (URLs, see `resolvePluginModule`) the workers add to the default registry, as
   * `sitemapTreeForHomepage`'s `pluginModules` and `usp --plugin` do. Ignored with `registryModule`.
   */
  pluginModules?: readonly string[];
  /** Where the worker script is, for bundlers that move it (default: `./worker.js` beside this file). */
  workerUrl?: string | URL;
  /** Bytes of body sent ahead to a worker before it has read them (default 1 MiB). */
  maxBytesInFlight?: number;
  /**
   * V8 heap limits of each worker (default: V8's own). A small young generation saves a few MiB
   * of RSS but costs much more in garbage collection (8 MiB: +30% parse time on the 1M site);
   * an old-generation cap makes a worker die, and its documents fail, on a large document.
   */
  resourceLimits?: ResourceLimits;
  /**
   * Large documents parsed in the calling thread at the same time before the next one goes to a
   * worker (default 0: every large document goes to a worker). With 1, one worker and the calling
   * thread share two cores: a single document never pays the crossing, and a second document in
   * flight runs in parallel on the worker.
   */
  callerThreadDocuments?: number;
}

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

interface Job {
  id: number;
  opts: ParseDocumentOptions;
  slot: Slot;
  warnings: Warning[];
  /** Pages handed to `onPages`, and the type the worker gave them: what an abandoned job keeps. */
  pageCount: number;
  pagesType: PagesSitemapType | null;
  /** Set once the caller's signal aborted: the worker has this long to answer. */
  graceTimer: ReturnType<typeof setTimeout> | null;
  /** The pump waits for body bytes the source does not have yet. */
  awaitingBody: boolean;
  /** ... and the worker has read every byte sent, for STARVED_AFTER_MS: its thread is idle. */
  starved: boolean;
  /** Counts the body's answers: a starvation check is for the wait it started in. */
  bodyTurn: number;
  /** The `bodyTurn` whose wait a starvation check is scheduled for (-1: none yet). */
  checkTurn: number;
  inFlight: number;
  creditWaiter: (() => void) | null;
  finished: boolean;
  unlisten: (() => void) | null;
  /** Messages of one job are handled in order, each after the previous one's onPages. */
  chain: Promise<void>;
  resolve(d: ParsedDocument): void;
  reject(e: unknown): void;
}

interface Waiting {
  /** Starts the document if a thread is free; false when none is. */
  start(): boolean;
  reject(error: unknown): void;
}

interface Slot {
  worker: Worker | null;
  jobs: Map<number, Job>;
}

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

// Every key of the options type, so the table cannot fall behind it.
const WORKER_PARSER_OPTIONS = {
  workers: true,
  inlineBelowBytes: true,
  registryModule: true,
  pluginModules: true,
  workerUrl: true,
  maxBytesInFlight: true,
  resourceLimits: true,
  callerThreadDocuments: true,
} satisfies Record<keyof WorkerParserOptions, true>;

/** @internal What the CLI sets for the parse workers of its own process (see `tuneParseWorkers`). */
interface ProcessTuning {
  youngGenerationMb: number | null;
  externalGcStepMb: number | null;
}

const processTuning: ProcessTuning = { youngGenerationMb: null, externalGcStepMb: null };

/**
 * @internal For the CLI's own process, never the library: the parse workers started from now on
 * get a young generation of `youngGenerationMb` (over `resourceLimits`' own) and run a full
 * collection whenever their external memory grows by `externalGcStepMb` MiB, as the CLI's main
 * thread does (node/external-memory-gc.ts). A worker's young generation as large as the main thread's
 * halves its scavenges; without the collections, the spent body chunks whose wrappers were
 * promoted (a worker holds up to `maxBytesInFlight` of them) would wait for V8's own full
 * collection, 64 MiB of external memory later.
 */
export function tuneParseWorkers(tuning: Partial<ProcessTuning>): void {
  Object.assign(processTuning, tuning);
}

export function createWorkerParser(options: WorkerParserOptions = {}): WorkerParser {
  return workerParser(options, false);
}

/**
 * @internal A pool for a walk whose pages go only to the temp-file store (api/tree.ts's trees): a
 * worker's batch of ordinary pages crosses as their records alone, and its page objects are made
 * on this thread only if something reads them (see `recordPages`). In `usp ls`'s default format
 * the pages a worker parsed were cloned URL by URL and rebuilt here only for the store to
 * take their records.
 */
export function createStoringWorkerParser(options: WorkerParserOptions = {}): WorkerParser {
  return workerParser(options, true);
}

function workerParser(options: WorkerParserOptions, recordsOnly: boolean): WorkerParser {
  rejectUnknownOptions(options, WORKER_PARSER_OPTIONS);
  const size = options.workers ?? Math.min(2, availableParallelism());
  if (!Number.isInteger(size) || size < 1) throw new InvalidOptionError('workers', 'must be an integer >= 1');
  const inlineBelow = options.inlineBelowBytes ?? 65_536;
  if (typeof inlineBelow !== 'number' || !(inlineBelow >= 0)) {
    throw new InvalidOptionError('inlineBelowBytes', 'must be a number >= 0');
  }
  const maxInFlight = options.maxBytesInFlight ?? 1024 * 1024;
  if (typeof maxInFlight !== 'number' || !(maxInFlight >= 1)) {
    throw new InvalidOptionError('maxBytesInFlight', 'must be a number >= 1');
  }
  const workerUrl = options.workerUrl ?? new URL('./worker.js', import.meta.url);
  const registryModule = options.registryModule === undefined ? null : String(options.registryModule);
  const resourceLimits = options.resourceLimits;
  const callerMax = options.callerThreadDocuments ?? 0;
  if (!Number.isInteger(callerMax) || callerMax < 0) {
    throw new InvalidOptionError('callerThreadDocuments', 'must be an integer >= 0');
  }
  let callerActive = 0;
  const waiting: Waiting[] = [];
  const wakeWaiting = () => {
    while (waiting.length > 0 && !closed) {
      if (!waiting[0].start()) return;
      waiting.shift();
    }
  };
  const slots: Slot[] = Array.from({ length: size }, () => ({ worker: null, jobs: new Map() }));
  let nextId = 1;
  let closed = false;
  let refd = true;
  /** A worker holds the process only while it has documents, and only while the pool is ref'd. */
  const applyRef = (slot: Slot) => {
    if (refd && slot.jobs.size > 0) slot.worker?.ref();
    else slot.worker?.unref();
  };

  const failSlot = (slot: Slot, error: unknown) => {
    const jobs = [...slot.jobs.values()];
    slot.jobs.clear();
    slot.worker = null;
    for (const job of jobs) {
      job.finished = true;
      job.creditWaiter?.();
      job.reject(error);
    }
    wakeWaiting();
  };

  const spawn = (slot: Slot): Worker => {
    const { youngGenerationMb, externalGcStepMb } = processTuning;
    const limits =
      youngGenerationMb === null
        ? resourceLimits
        : { ...resourceLimits, maxYoungGenerationSizeMb: youngGenerationMb };
    const w = new Worker(workerUrl, {
      workerData: { registryModule, pluginModules: [...(options.pluginModules ?? [])], externalGcStepMb },
      ...(limits !== undefined ? { resourceLimits: limits } : {}),
    });
    w.unref();
    w.on('message', (m: FromWorker) => onMessage(slot, m));
    w.on('error', (e) => {
      if (slot.worker === w)
        failSlot(slot, new UspError('USP_WORKER', `Parser worker failed: ${e.message}`, { cause: e }));
    });
    w.on('exit', (code) => {
      if (slot.worker === w)
        failSlot(slot, new UspError('USP_WORKER', `Parser worker exited with code ${code}`));
    });
    slot.worker = w;
    return w;
  };

  const settle = (job: Job) => {
    job.finished = true;
    if (job.graceTimer !== null) clearTimeout(job.graceTimer);
    job.unlisten?.();
    job.creditWaiter?.();
    job.slot.jobs.delete(job.id);
    // An idle worker must not keep the process alive.
    applyRef(job.slot);
    wakeWaiting();
  };

  const onMessage = (slot: Slot, m: FromWorker) => {
    const job = slot.jobs.get(m.id);
    if (job === undefined) return;
    if (m.t === 'credit') {
      job.inFlight -= m.bytes;
      checkStarved(job);
      const w = job.creditWaiter;
      job.creditWaiter = null;
      w?.();
      return;
    }
    job.chain = job.chain
      .then(() => (job.finished ? undefined : handle(job, m)))
      .catch((error) => fail(job, error));
  };

  /**
   * A slow body (a site sending a few KB at a time) leaves its thread idle, waiting for bytes; a
   * document waiting for a thread may then join it rather than wait, unread, for the slow one to
   * end (issue 14: a third slow urlset delivered nothing until one of the first two had ended).
   * Checked after this turn's I/O (a body with bytes already buffered answers before that), and
   * again until the wait has lasted STARVED_AFTER_MS.
   */
  const checkStarved = (job: Job) => {
    const turn = job.bodyTurn;
    if (job.finished || !job.awaitingBody || job.inFlight > 0 || job.starved || job.checkTurn === turn)
      return;
    job.checkTurn = turn;
    const since = Date.now();
    const check = () =>
      setImmediate(() => {
        if (job.finished || !job.awaitingBody || job.inFlight > 0 || job.bodyTurn !== turn) return;
        const left = since + STARVED_AFTER_MS - Date.now();
        if (left > 0) {
          // Unref'd: the pump's wait for the body is what holds the process.
          setTimeout(check, left).unref();
          return;
        }
        job.starved = true;
        wakeWaiting();
      });
    check();
  };

  const fail = (job: Job, error: unknown) => {
    if (job.finished) return;
    job.slot.worker?.postMessage({ t: 'cancel', id: job.id } satisfies ToWorker);
    settle(job);
    job.reject(error);
  };

  const addWarnings = (job: Job, warnings: Warning[]) => {
    for (const w of warnings) {
      job.warnings.push(w);
      job.opts.onWarning?.(w);
    }
  };

  /**
   * The caller aborted and the worker did not answer in time (busy in a long step, or starved on
   * a loaded machine): the job ends here with the pages already handed on, as an in-thread parse
   * ends at an abort, and the worker is replaced, since it may never come back. Queued behind the
   * messages already received, so their pages are kept.
   */
  const abandon = (job: Job) => {
    job.chain = job.chain.then(() => {
      if (job.finished) return;
      const slot = job.slot;
      const worker = slot.worker;
      // The worker goes, with any other document it holds (a slow one sharing it); before
      // `settle`, which may place a waiting document on this slot.
      slot.jobs.delete(job.id);
      failSlot(
        slot,
        new UspError('USP_WORKER', 'The parser worker was replaced: it did not stop after an abort'),
      );
      if (worker !== null) void worker.terminate();
      const warning: Warning = {
        code: 'truncated',
        message: `Parsing was aborted; the parser worker did not stop within ${ABORT_GRACE_MS} ms, what was read before is kept`,
        url: job.opts.url,
      };
      addWarnings(job, [warning]);
      settle(job);
      job.resolve({
        url: job.opts.url,
        type: job.pagesType ?? 'InvalidSitemap',
        reason:
          job.pagesType === null ? `Parsing of ${job.opts.url} was aborted before any page was read` : null,
        children: [],
        warnings: job.warnings,
        pageCount: job.pageCount,
        bytes: 0,
        truncated: true,
      });
    });
  };

  const handle = async (job: Job, m: Exclude<FromWorker, { t: 'credit' }>): Promise<void> => {
    if (m.t === 'pages' || m.t === 'records') {
      addWarnings(job, m.warnings);
      const pages = m.t === 'records' ? recordPages(m.n, m.records) : decodePages(m.batch);
      job.pageCount += pages.length;
      job.pagesType ??= m.type;
      if (job.opts.onPages !== undefined) await job.opts.onPages(pages, m.type);
      job.slot.worker?.postMessage({ t: 'ack', id: job.id } satisfies ToWorker);
      return;
    }
    if (m.t === 'fail') {
      fail(job, new UspError('USP_WORKER', m.message));
      return;
    }
    addWarnings(job, m.warnings);
    settle(job);
    job.resolve({ ...(reviveDates(m.result) as ParsedDocument), warnings: job.warnings });
  };

  const pump = async (job: Job, worker: Worker, body: AsyncIterable<Uint8Array> | Uint8Array) => {
    const send = (chunk: Uint8Array) => {
      // A copy we own: the source's buffer may be pooled or reused by the HTTP client.
      const data = new Uint8Array(chunk);
      job.inFlight += data.length;
      worker.postMessage({ t: 'chunk', id: job.id, data } satisfies ToWorker, [data.buffer]);
    };
    if (body instanceof Uint8Array) {
      for (let i = 0; i < body.length && !job.finished; i += 65_536) {
        while (job.inFlight >= maxInFlight && !job.finished) {
          await new Promise<void>((r) => {
            job.creditWaiter = r;
          });
        }
        if (!job.finished) send(body.subarray(i, i + 65_536));
      }
      if (!job.finished) worker.postMessage({ t: 'end', id: job.id } satisfies ToWorker);
      return;
    }
    const it = body[Symbol.asyncIterator]();
    try {
      while (!job.finished) {
        while (job.inFlight >= maxInFlight && !job.finished) {
          await new Promise<void>((r) => {
            job.creditWaiter = r;
          });
        }
        if (job.finished) break;
        const pending = it.next();
        job.awaitingBody = true;
        checkStarved(job);
        const next = await pending;
        job.awaitingBody = false;
        job.starved = false;
        job.bodyTurn++;
        if (next.done) {
          if (!job.finished) worker.postMessage({ t: 'end', id: job.id } satisfies ToWorker);
          return;
        }
        if (!job.finished && next.value.length > 0) send(next.value);
      }
      // The parser stopped before the body ended (a limit, an unknown root): stop reading.
      await it.return?.();
    } catch (error) {
      if (job.finished) return;
      const e = error as { message?: unknown; code?: unknown; name?: unknown };
      worker.postMessage({
        t: 'end',
        id: job.id,
        error: {
          message: typeof e?.message === 'string' ? e.message : String(error),
          ...(typeof e?.code === 'string' ? { code: e.code } : {}),
          ...(typeof e?.name === 'string' ? { name: e.name } : {}),
        },
      } satisfies ToWorker);
    }
  };

  const inline = (opts: ParseDocumentOptions): boolean => {
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
  };

  /** A worker whose every document waits for bytes it does not have: it can take one more. */
  const idle = (slot: Slot): boolean => {
    if (slot.worker === null) return false;
    for (const job of slot.jobs.values()) if (!job.starved) return false;
    return true;
  };

  /** Starts `opts` on a free thread (this one first, then an idle worker); null when none is free. */
  const place = (opts: ParseDocumentOptions): Promise<ParsedDocument> | null => {
    if (callerActive < callerMax) {
      callerActive++;
      return parseDocument(opts).finally(() => {
        callerActive--;
        wakeWaiting();
      });
    }
    const slot = slots.find((s) => s.jobs.size === 0) ?? slots.find(idle);
    return slot === undefined ? null : toWorker(opts, slot);
  };

  const parse = (opts: ParseDocumentOptions): Promise<ParsedDocument> => {
    if (closed) return Promise.reject(new UspError('USP_CLOSED', 'The worker parser is closed'));
    if (opts.signal?.aborted || inline(opts)) return parseDocument(opts);
    try {
      // Refused exactly as in-thread, before anything crosses to a worker.
      checkParseDocumentOptions(opts);
    } catch (error) {
      return Promise.reject(error);
    }
    const started = place(opts);
    if (started !== null) return started;
    // Every thread is busy: the document waits, unread, for the first one to free up. One
    // document per thread keeps the threads' shares even (a worker given three documents at once
    // finishes long after this thread has run dry).
    return new Promise<ParsedDocument>((resolve, reject) => {
      const signal = opts.signal;
      const onAbort = () => {
        const i = waiting.indexOf(entry);
        if (i !== -1) waiting.splice(i, 1);
        parseDocument(opts).then(resolve, reject);
      };
      const entry: Waiting = {
        start: () => {
          const p = place(opts);
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
      waiting.push(entry);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  };

  const toWorker = (opts: ParseDocumentOptions, slot: Slot): Promise<ParsedDocument> => {
    const body = typeof opts.body === 'string' ? new TextEncoder().encode(opts.body) : opts.body;
    const worker = slot.worker ?? spawn(slot);
    const headers: Record<string, string> = {};
    for (const name of FORWARDED_HEADERS) {
      const v = opts.headers?.(name);
      if (v !== null && v !== undefined) headers[name] = v;
    }
    return new Promise<ParsedDocument>((resolve, reject) => {
      const id = nextId++;
      const job: Job = {
        id,
        opts,
        slot,
        warnings: [],
        pageCount: 0,
        pagesType: null,
        graceTimer: null,
        awaitingBody: false,
        starved: false,
        bodyTurn: 0,
        checkTurn: -1,
        inFlight: 0,
        creditWaiter: null,
        finished: false,
        unlisten: null,
        chain: Promise.resolve(),
        resolve,
        reject,
      };
      slot.jobs.set(id, job);
      applyRef(slot);
      worker.postMessage({
        t: 'start',
        id,
        url: opts.url,
        headers,
        limits: opts.limits,
        recordsOnly,
      } satisfies ToWorker);
      const signal = opts.signal;
      if (signal !== undefined) {
        const onAbort = () => {
          worker.postMessage({ t: 'abort', id } satisfies ToWorker);
          // The worker sees the abort between two steps of its parse; a deadline must not wait
          // for a step that never ends.
          job.graceTimer = setTimeout(() => abandon(job), ABORT_GRACE_MS);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        job.unlisten = () => signal.removeEventListener('abort', onAbort);
      }
      pump(job, worker, body).catch((error) => fail(job, error));
    });
  };

  return {
    parse: (opts) => {
      // Bad options throw exactly as in-thread (InvalidOptionError), checked by core itself.
      if (opts === null || typeof opts !== 'object' || typeof opts.url !== 'string' || opts.url === '') {
        return parseDocument(opts);
      }
      return parse(opts);
    },
    size,
    ref: () => {
      refd = true;
      for (const slot of slots) applyRef(slot);
    },
    unref: () => {
      refd = false;
      for (const slot of slots) applyRef(slot);
    },
    close: async () => {
      closed = true;
      for (const w of waiting.splice(0)) w.reject(new UspError('USP_CLOSED', 'The worker parser was closed'));
      await Promise.all(
        slots.map(async (slot) => {
          const w = slot.worker;
          failSlot(slot, new UspError('USP_CLOSED', 'The worker parser was closed'));
          if (w !== null) await w.terminate();
        }),
      );
    },
  };
}
