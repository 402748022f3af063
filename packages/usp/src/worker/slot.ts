import { Worker } from 'node:worker_threads';
import { type ParseDocumentOptions, type ParsedDocument, UspError } from '@usp-ts/core';
import { Job, type JobThread } from './job.js';
import { parseWorkerTuning, type ThreadConfig } from './options.js';
import { FORWARDED_HEADERS, type FromWorker, type ToWorker } from './protocol.js';

/** What a slot needs of its pool. */
export interface SlotOwner {
  /** Whether busy workers hold the process (`WorkerParser.ref`/`unref`). */
  readonly refd: boolean;
  /** A thread may have become free: start waiting documents. */
  wake(): void;
}

/**
 * One worker thread of a pool and the documents (jobs) it parses. The thread is started with
 * its first document and replaced after it dies or is given up; a dead thread fails its jobs.
 */
export class Slot implements JobThread {
  worker: Worker | null = null;
  readonly jobs = new Map<number, Job>();
  readonly #owner: SlotOwner;
  readonly #config: ThreadConfig;

  constructor(owner: SlotOwner, config: ThreadConfig) {
    this.#owner = owner;
    this.#config = config;
  }

  /** A worker holds the process only while it has documents, and only while the pool is ref'd. */
  applyRef(): void {
    if (this.#owner.refd && this.jobs.size > 0) this.worker?.ref();
    else this.worker?.unref();
  }

  /** A worker whose every document waits for bytes it does not have: it can take one more. */
  idle(): boolean {
    if (this.worker === null) return false;
    for (const job of this.jobs.values()) if (!job.starved) return false;
    return true;
  }

  /** Parses `opts` on this slot's worker (started if need be) as job `id`. */
  start(id: number, opts: ParseDocumentOptions, maxBytesInFlight: number): Promise<ParsedDocument> {
    const body = typeof opts.body === 'string' ? new TextEncoder().encode(opts.body) : opts.body;
    const worker = this.worker ?? this.#spawn();
    const headers: Record<string, string> = {};
    for (const name of FORWARDED_HEADERS) {
      const v = opts.headers?.(name);
      if (v !== null && v !== undefined) headers[name] = v;
    }
    return new Promise<ParsedDocument>((resolve, reject) => {
      const job = new Job(id, opts, this, maxBytesInFlight, { resolve, reject });
      this.jobs.set(id, job);
      this.applyRef();
      worker.postMessage({
        t: 'start',
        id,
        url: opts.url,
        headers,
        limits: opts.limits,
        recordsOnly: this.#config.recordsOnly,
      } satisfies ToWorker);
      if (opts.signal !== undefined) job.listen(opts.signal, worker);
      job.pump(worker, body).catch((error) => job.fail(error));
    });
  }

  /** The worker is gone (or the pool closed): its documents fail with `error`. */
  fail(error: unknown): void {
    const jobs = [...this.jobs.values()];
    this.jobs.clear();
    this.worker = null;
    for (const job of jobs) job.lost(error);
    this.#owner.wake();
  }

  release(job: Job): void {
    this.jobs.delete(job.id);
    // An idle worker must not keep the process alive.
    this.applyRef();
    this.#owner.wake();
  }

  replace(job: Job): void {
    const worker = this.worker;
    this.jobs.delete(job.id);
    this.fail(new UspError('USP_WORKER', 'The parser worker was replaced: it did not stop after an abort'));
    if (worker !== null) void worker.terminate();
  }

  wake(): void {
    this.#owner.wake();
  }

  /** Ends the worker, failing its documents with `error`. */
  async close(error: unknown): Promise<void> {
    const w = this.worker;
    this.fail(error);
    if (w !== null) await w.terminate();
  }

  #spawn(): Worker {
    const { youngGenerationMb, externalGcStepMb } = parseWorkerTuning();
    const { workerUrl, registryModule, pluginModules, resourceLimits } = this.#config;
    const limits =
      youngGenerationMb === null
        ? resourceLimits
        : { ...resourceLimits, maxYoungGenerationSizeMb: youngGenerationMb };
    const w = new Worker(workerUrl, {
      workerData: { registryModule, pluginModules: [...pluginModules], externalGcStepMb },
      ...(limits !== undefined ? { resourceLimits: limits } : {}),
    });
    w.unref();
    w.on('message', (m: FromWorker) => this.jobs.get(m.id)?.receive(m));
    w.on('error', (e) => {
      if (this.worker === w)
        this.fail(new UspError('USP_WORKER', `Parser worker failed: ${e.message}`, { cause: e }));
    });
    w.on('exit', (code) => {
      if (this.worker === w) this.fail(new UspError('USP_WORKER', `Parser worker exited with code ${code}`));
    });
    this.worker = w;
    return w;
  }
}
