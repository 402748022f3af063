import { availableParallelism } from 'node:os';
import { type ResourceLimits, Worker } from 'node:worker_threads';
import { createGunzip } from 'node:zlib';
import {
  CHANGE_FREQUENCIES,
  type ChangeFrequency,
  capGunzipOutput,
  checkParseDocumentOptions,
  InvalidOptionError,
  type Page,
  type PagesSitemapType,
  type ParseDocumentOptions,
  type ParsedDocument,
  parseDocument,
  rejectUnknownOptions,
  SitemapDate,
  UspError,
  type Warning,
} from '@usp-ts/core';

// ---------------------------------------------------------------------------------------------
// Gunzip on node:zlib

/**
 * Node's streaming gunzip with large output chunks: at zlib's default 16 KiB it runs at a third
 * of the speed. Same contract as core's `gunzip` (a cap on the output; corrupt or cut data throws
 * `GunzipError('gzip')` after yielding what decompressed; the input's own error is rethrown as is).
 */
export async function* nodeGunzip(
  input: AsyncIterable<Uint8Array>,
  maxOutputBytes: number,
  chunkBytes = 64 * 1024,
): AsyncGenerator<Uint8Array, void, undefined> {
  const gz = createGunzip({ chunkSize: chunkBytes });
  const it = input[Symbol.asyncIterator]();
  let inputError: { error: unknown } | null = null;
  let stopped = false;
  const feed = (async () => {
    try {
      while (!stopped && !gz.destroyed) {
        let next: IteratorResult<Uint8Array>;
        try {
          next = await it.next();
        } catch (error) {
          inputError = { error };
          break;
        }
        if (next.done || stopped || gz.destroyed) break;
        if (!gz.write(next.value)) {
          await new Promise<void>((resolve) => {
            const done = () => {
              gz.off('drain', done);
              gz.off('close', done);
              resolve();
            };
            gz.on('drain', done);
            gz.on('close', done);
          });
        }
      }
      if (stopped) await it.return?.();
    } catch {
      // The input's return() failed while stopping: nothing left to report to.
    } finally {
      // Ending flushes what the input gave; a cut stream then fails as "unexpected end of file".
      if (!gz.destroyed) gz.end();
    }
  })();

  const out = gz[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  try {
    yield* capGunzipOutput({ read: () => out.next() }, maxOutputBytes, async () => {
      await feed;
      return inputError;
    });
  } finally {
    stopped = true;
    gz.destroy();
  }
}

// ---------------------------------------------------------------------------------------------
// Pages across threads. Structured clone keeps plain data but drops prototypes (a SitemapDate
// arrives as a plain object), so pages travel in a columnar form and are rebuilt on this side.

const DATE_TAG = '__uspSitemapDate';
const NO_OFFSET = -2_147_483_648;
const FREQ_INDEX = new Map<string, number>(CHANGE_FREQUENCIES.map((f, i) => [f, i + 1]));

/** @internal */
export interface PageBatch {
  n: number;
  urls: string[];
  priority: Float64Array;
  /** Epoch ms; NaN for no date. */
  lastmod: Float64Array;
  offset: Int32Array;
  micros: Uint16Array;
  /** 0: null, 1-7: CHANGE_FREQUENCIES; 255: see `extra`. */
  freq: Uint8Array;
  /** `[index, data, index, data, ...]` for pages with news, images, alternates, extensions. */
  extra: unknown[] | null;
}

/** @internal Replaces every SitemapDate inside plain data by a tagged tuple. */
export function tagDates(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (v instanceof SitemapDate) return { [DATE_TAG]: [v.epochMs, v.offsetMinutes, v.microseconds] };
  if (Array.isArray(v)) return v.map(tagDates);
  const o: Record<string, unknown> = {};
  for (const k of Object.keys(v)) o[k] = tagDates((v as Record<string, unknown>)[k]);
  return o;
}

/** @internal The inverse of {@link tagDates}. */
export function reviveDates(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(reviveDates);
  const t = (v as Record<string, unknown>)[DATE_TAG] as [number, number | null, number] | undefined;
  if (t !== undefined) return new SitemapDate(t[0], t[1], t[2]);
  const o: Record<string, unknown> = {};
  for (const k of Object.keys(v)) o[k] = reviveDates((v as Record<string, unknown>)[k]);
  return o;
}

/** @internal */
export function encodePages(pages: readonly Page[]): PageBatch {
  const n = pages.length;
  const b: PageBatch = {
    n,
    urls: new Array<string>(n),
    priority: new Float64Array(n),
    lastmod: new Float64Array(n),
    offset: new Int32Array(n),
    micros: new Uint16Array(n),
    freq: new Uint8Array(n),
    extra: null,
  };
  for (let i = 0; i < n; i++) {
    const p = pages[i];
    b.urls[i] = p.url;
    b.priority[i] = p.priority;
    const d = p.lastModified;
    if (d === null) b.lastmod[i] = Number.NaN;
    else {
      b.lastmod[i] = d.epochMs;
      b.offset[i] = d.offsetMinutes ?? NO_OFFSET;
      b.micros[i] = d.microseconds;
    }
    let odd: ChangeFrequency | null = null;
    if (p.changeFrequency !== null) {
      const f = FREQ_INDEX.get(p.changeFrequency);
      if (f === undefined) {
        b.freq[i] = 255;
        odd = p.changeFrequency;
      } else b.freq[i] = f;
    }
    if (
      p.newsStory !== null ||
      p.images !== null ||
      p.alternates !== null ||
      p.extensions !== undefined ||
      odd
    ) {
      b.extra ??= [];
      b.extra.push(
        i,
        tagDates({
          newsStory: p.newsStory,
          images: p.images,
          alternates: p.alternates,
          extensions: p.extensions,
          changeFrequency: odd,
        }),
      );
    }
  }
  return b;
}

/** @internal */
export function decodePages(b: PageBatch): Page[] {
  const pages = new Array<Page>(b.n);
  for (let i = 0; i < b.n; i++) {
    const ms = b.lastmod[i];
    const f = b.freq[i];
    pages[i] = {
      url: b.urls[i],
      priority: b.priority[i],
      lastModified: Number.isNaN(ms)
        ? null
        : new SitemapDate(ms, b.offset[i] === NO_OFFSET ? null : b.offset[i], b.micros[i]),
      changeFrequency: f === 0 || f === 255 ? null : CHANGE_FREQUENCIES[f - 1],
      newsStory: null,
      images: null,
      alternates: null,
    };
  }
  const extra = b.extra;
  if (extra !== null) {
    for (let k = 0; k < extra.length; k += 2) {
      const i = extra[k] as number;
      const x = reviveDates(extra[k + 1]) as Page & { changeFrequency: ChangeFrequency | null };
      const p = pages[i] as { -readonly [K in keyof Page]: Page[K] };
      p.newsStory = x.newsStory ?? null;
      p.images = x.images ?? null;
      p.alternates = x.alternates ?? null;
      if (x.changeFrequency) p.changeFrequency = x.changeFrequency;
      if (x.extensions !== undefined) p.extensions = x.extensions;
    }
  }
  return pages;
}

// ---------------------------------------------------------------------------------------------
// Messages

/** @internal main → worker */
export type ToWorker =
  | {
      t: 'start';
      id: number;
      url: string;
      headers: Record<string, string>;
      limits: ParseDocumentOptions['limits'];
    }
  | { t: 'chunk'; id: number; data: Uint8Array }
  | { t: 'end'; id: number; error?: { message: string; code?: string; name?: string } }
  | { t: 'ack'; id: number }
  | { t: 'abort'; id: number }
  | { t: 'cancel'; id: number };

/** @internal worker → main */
export type FromWorker =
  | { t: 'credit'; id: number; bytes: number }
  | { t: 'pages'; id: number; type: PagesSitemapType; batch: PageBatch; warnings: Warning[] }
  /** `result` is the ParsedDocument with its dates tagged, its warnings sent beside it. */
  | { t: 'done'; id: number; result: unknown; warnings: Warning[] }
  | { t: 'fail'; id: number; message: string };

/** Response headers a format may look at when deciding; the lookup function cannot cross threads. */
const FORWARDED_HEADERS = [
  'content-type',
  'content-encoding',
  'content-disposition',
  'content-length',
  'x-robots-tag',
];

// ---------------------------------------------------------------------------------------------
// The pool

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

export function createWorkerParser(options: WorkerParserOptions = {}): WorkerParser {
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
    const w = new Worker(workerUrl, {
      workerData: { registryModule, pluginModules: [...(options.pluginModules ?? [])] },
      ...(resourceLimits !== undefined ? { resourceLimits } : {}),
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
      const w = job.creditWaiter;
      job.creditWaiter = null;
      w?.();
      return;
    }
    job.chain = job.chain
      .then(() => (job.finished ? undefined : handle(job, m)))
      .catch((error) => fail(job, error));
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

  const handle = async (job: Job, m: Exclude<FromWorker, { t: 'credit' }>): Promise<void> => {
    if (m.t === 'pages') {
      addWarnings(job, m.warnings);
      if (job.opts.onPages !== undefined) await job.opts.onPages(decodePages(m.batch), m.type);
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
        const next = await it.next();
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

  /** Starts `opts` on a free thread (this one first, then an idle worker); null when none is free. */
  const place = (opts: ParseDocumentOptions): Promise<ParsedDocument> | null => {
    if (callerActive < callerMax) {
      callerActive++;
      return parseDocument(opts).finally(() => {
        callerActive--;
        wakeWaiting();
      });
    }
    const slot = slots.find((s) => s.jobs.size === 0);
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
      worker.postMessage({ t: 'start', id, url: opts.url, headers, limits: opts.limits } satisfies ToWorker);
      const signal = opts.signal;
      if (signal !== undefined) {
        const onAbort = () => worker.postMessage({ t: 'abort', id } satisfies ToWorker);
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
