// The worker thread of `createWorkerParser`: runs core's parseDocument on bodies streamed from the
// main thread and sends pages back in batches, one batch per chunk read, with a small window of
// unacknowledged batches so a slow consumer on the main thread still pauses the parse.
import { parentPort, workerData } from 'node:worker_threads';
import {
  type Page,
  type PagesSitemapType,
  parseDocument,
  type Registry,
  type Warning,
} from '@usp-ts/core/parse';
import { collectOnExternalGrowth } from '../node/external-memory-gc.js';
import { nodeGunzip } from '../node/gunzip.js';
import { encodePages, encodeRecords, tagDates } from '../pages/codec.js';
import { RecordBuffer } from '../pages/records.js';
import { createDefaultRegistry } from '../plugins/defaults.js';
import { importPlugins, registryWithPlugins } from '../plugins/modules.js';
import type { FromWorker, ToWorker } from './protocol.js';

/**
 * Page batches sent ahead of the main thread's acknowledgements: a bound for a consumer that
 * stops reading, not a pace. The main thread acknowledges between its own steps (it parses a
 * document too, a 64 KiB piece at a time), so a window of 2 kept the worker waiting for acks:
 * 1M-URL site, 2.8 s of a 13 s run under load. 16 batches of a 64 KiB chunk's pages are about
 * 5,000 pages held (~1 MiB).
 */
const WINDOW = 16;

/** Where every batch's records are built: it grows to the largest batch once. */
const scratch = new RecordBuffer(64 * 1024);

const port = parentPort;
if (port === null) throw new Error('worker.js runs as a worker thread of createWorkerParser');

// Set only by the CLI for its own process (pool.ts's `tuneParseWorkers`).
const gcStepMb = (workerData as { externalGcStepMb?: number | null } | null)?.externalGcStepMb ?? null;
if (gcStepMb !== null) collectOnExternalGrowth(gcStepMb);

async function loadRegistry(): Promise<Registry> {
  const data = workerData as { registryModule: string | null; pluginModules?: string[] } | null;
  const mod = data?.registryModule ?? null;
  // The same plugin modules as the caller's registry: documents parse alike on either thread.
  if (mod === null && data?.pluginModules !== undefined && data.pluginModules.length > 0) {
    return registryWithPlugins(await importPlugins(data.pluginModules));
  }
  if (mod === null) return createDefaultRegistry();
  const m = (await import(mod)) as { createRegistry?: () => Registry };
  if (typeof m.createRegistry !== 'function') throw new Error(`${mod} does not export createRegistry()`);
  return m.createRegistry();
}
const registryReady = loadRegistry();

class BodyError extends Error {
  readonly code: string | undefined;
  constructor(e: { message: string; code?: string; name?: string }) {
    super(e.message);
    this.name = e.name ?? 'Error';
    this.code = e.code;
  }
}

class Cancelled extends Error {}

class Job {
  readonly id: number;
  readonly recordsOnly: boolean;
  readonly abort = new AbortController();
  #chunks: Uint8Array[] = [];
  #ended = false;
  #error: BodyError | null = null;
  #wake: (() => void) | null = null;
  #unacked = 0;
  #ackWake: (() => void) | null = null;
  #cancelled = false;
  pendingWarnings: Warning[] = [];

  constructor(id: number, recordsOnly: boolean) {
    this.id = id;
    this.recordsOnly = recordsOnly;
  }

  push(c: Uint8Array) {
    this.#chunks.push(c);
    this.#poke();
  }
  end(error?: { message: string; code?: string; name?: string }) {
    this.#ended = true;
    if (error) this.#error = new BodyError(error);
    this.#poke();
  }
  ack() {
    this.#unacked--;
    const w = this.#ackWake;
    this.#ackWake = null;
    w?.();
  }
  cancel() {
    this.#cancelled = true;
    this.abort.abort();
    this.end({ message: 'cancelled' });
    this.ack();
  }
  #poke() {
    const w = this.#wake;
    this.#wake = null;
    w?.();
  }

  async *body(): AsyncGenerator<Uint8Array, void, undefined> {
    while (true) {
      const c = this.#chunks.shift();
      if (c !== undefined) {
        port?.postMessage({ t: 'credit', id: this.id, bytes: c.length } satisfies FromWorker);
        yield c;
        continue;
      }
      if (this.#error !== null) throw this.#error;
      if (this.#ended) return;
      await new Promise<void>((r) => {
        this.#wake = r;
      });
    }
  }

  async sendPages(pages: Page[], type: PagesSitemapType) {
    if (this.#cancelled) throw new Cancelled('cancelled');
    const warnings = this.pendingWarnings;
    this.pendingWarnings = [];
    // The records alone: no URL string is cloned, no page object made again on the other side.
    const records = this.recordsOnly ? encodeRecords(pages, scratch) : null;
    if (records !== null) {
      port?.postMessage(
        { t: 'records', id: this.id, type, n: pages.length, records, warnings } satisfies FromWorker,
        [records.buffer as ArrayBuffer],
      );
    } else this.#sendBatch(pages, type, warnings);
    this.#unacked++;
    while (this.#unacked >= WINDOW && !this.#cancelled) {
      await new Promise<void>((r) => {
        this.#ackWake = r;
      });
    }
    if (this.#cancelled) throw new Cancelled('cancelled');
  }

  #sendBatch(pages: Page[], type: PagesSitemapType, warnings: Warning[]) {
    const batch = encodePages(pages, scratch);
    const transfer = [
      batch.priority.buffer,
      batch.lastmod.buffer,
      batch.offset.buffer,
      batch.micros.buffer,
      batch.freq.buffer,
    ];
    if (batch.records !== null) transfer.push(batch.records.buffer);
    port?.postMessage(
      { t: 'pages', id: this.id, type, batch, warnings } satisfies FromWorker,
      transfer as ArrayBuffer[],
    );
  }
}

const jobs = new Map<number, Job>();

async function run(job: Job, m: Extract<ToWorker, { t: 'start' }>) {
  try {
    const registry = await registryReady;
    const headers = m.headers;
    const parsed = await parseDocument({
      url: m.url,
      body: job.body(),
      registry,
      headers: (name) => headers[name.toLowerCase()] ?? null,
      onWarning: (w) => job.pendingWarnings.push(w),
      onPages: (pages, type) => job.sendPages(pages, type),
      limits: m.limits,
      gunzip: nodeGunzip,
      signal: job.abort.signal,
    });
    // robots.txt rules are functions, which do not cross threads; the warnings travel on their own.
    const result = tagDates({ ...parsed, robots: null, warnings: [] });
    port?.postMessage({ t: 'done', id: job.id, result, warnings: job.pendingWarnings } satisfies FromWorker);
  } catch (error) {
    if (!(error instanceof Cancelled)) {
      const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      port?.postMessage({ t: 'fail', id: job.id, message } satisfies FromWorker);
    }
  } finally {
    jobs.delete(job.id);
  }
}

port.on('message', (m: ToWorker) => {
  if (m.t === 'start') {
    const job = new Job(m.id, m.recordsOnly);
    jobs.set(m.id, job);
    void run(job, m);
    return;
  }
  const job = jobs.get(m.id);
  if (job === undefined) return;
  if (m.t === 'chunk') job.push(m.data);
  else if (m.t === 'end') job.end(m.error);
  else if (m.t === 'ack') job.ack();
  else if (m.t === 'abort') {
    // The signal stops the parser; ending the body wakes it if it waits for bytes.
    job.abort.abort();
    job.end();
  } else if (m.t === 'cancel') job.cancel();
});
