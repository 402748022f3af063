import type { Page } from '../contract/model.js';
import type { Sitemap } from '../contract/sitemap.js';
import type { WalkSummary } from '../contract/walk-summary.js';
import type { WalkConfig } from './config.js';
import type { PageWalk, WalkedPage, WalkedSitemapInfo } from './page-walk.js';
import type { PageSink } from './task.js';
import { Walk } from './walk.js';
import type { WalkStats } from './walk-stats.js';

/** The async iterator of `walkPagesWithClient`: a bounded queue between the walk's parsers and the consumer. */
export class PageStream implements PageWalk {
  readonly #walk: Walk;
  readonly #highWater: number;
  readonly #run: (walk: Walk) => Promise<Sitemap>;
  readonly #queue: { pages: Page[]; sitemap: WalkedSitemapInfo }[] = [];
  #queued = 0;
  #batch: Page[] = [];
  #batchInfo: WalkedSitemapInfo | null = null;
  #pos = 0;
  #spaceWaiters: (() => void)[] = [];
  #dataWaiter: (() => void) | null = null;
  #running: Promise<void> | null = null;
  #finished = false;
  #error: { error: unknown } | null = null;
  #tree: Sitemap | null = null;

  constructor(config: WalkConfig, highWater: number, run: (walk: Walk) => Promise<Sitemap>) {
    this.#highWater = highWater;
    this.#run = run;
    this.#walk = new Walk(config, this.#sink);
  }

  get stats(): WalkStats {
    return this.#walk.stats;
  }

  get tree(): Sitemap | null {
    return this.#tree;
  }

  get summary(): WalkSummary | null {
    return this.#finished ? this.#walk.summary : null;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  readonly #sink: PageSink = (pages, sitemap) => {
    this.#queue.push({ pages, sitemap });
    this.#queued += pages.length;
    this.#wakeConsumer();
    if (this.#queued < this.#highWater || this.#walk.signal.aborted) return;
    return new Promise<void>((resolve) => this.#spaceWaiters.push(resolve));
  };

  #wakeConsumer(): void {
    const w = this.#dataWaiter;
    this.#dataWaiter = null;
    w?.();
  }

  #wakeProducers(): void {
    for (const w of this.#spaceWaiters.splice(0)) w();
  }

  #start(): void {
    if (this.#running !== null) return;
    this.#running = this.#run(this.#walk).then(
      (tree) => {
        this.#tree = tree;
        this.#finished = true;
        this.#wakeConsumer();
      },
      (error: unknown) => {
        this.#error = { error };
        this.#finished = true;
        this.#wakeConsumer();
      },
    );
  }

  async next(): Promise<IteratorResult<WalkedPage>> {
    this.#start();
    for (;;) {
      if (this.#pos < this.#batch.length) {
        const page = this.#batch[this.#pos++];
        return { done: false, value: { page, sitemap: this.#batchInfo! } };
      }
      const entry = this.#queue.shift();
      if (entry !== undefined) {
        this.#batch = entry.pages;
        this.#batchInfo = entry.sitemap;
        this.#pos = 0;
        this.#queued -= entry.pages.length;
        if (this.#queued < this.#highWater) this.#wakeProducers();
        continue;
      }
      this.#batch = [];
      if (this.#finished) {
        if (this.#error !== null) {
          const { error } = this.#error;
          this.#error = null;
          throw error;
        }
        return { done: true, value: undefined };
      }
      await new Promise<void>((resolve) => {
        this.#dataWaiter = resolve;
      });
    }
  }

  /** The consumer left (`break`): stop fetching, wait for in-flight work to wind down. */
  async return(): Promise<IteratorResult<WalkedPage>> {
    this.#walk.stop(null);
    this.#wakeProducers();
    this.#queue.length = 0;
    this.#queued = 0;
    this.#batch = [];
    if (this.#running !== null) await this.#running;
    this.#error = null;
    this.#finished = true;
    return { done: true, value: undefined };
  }

  async throw(error?: unknown): Promise<IteratorResult<WalkedPage>> {
    await this.return();
    throw error;
  }
}
