import { errorText } from '../contract/errors.js';
import type { ChildRef } from '../contract/model.js';
import { AbstractIndexSitemap, type Sitemap } from '../contract/sitemap.js';
import { safeKey } from './ancestry.js';
import { fetchChildren } from './children-step.js';
import { fetchOne } from './fetch-step.js';
import type { ReuseKind, StoredDocument } from './revisit.js';
import { loadPublicSuffixList } from './same-site.js';
import { skippedTask } from './skipped.js';
import { type FetchResult, type FetchTask, hook } from './task.js';
import { WalkState } from './walk-state.js';

/**
 * One walk: fetches sitemaps through the web client within the concurrency limit and the
 * budgets, parses them, and recurses into index children with usp's rules. The tree shape is
 * assembled by the callers in document order, whatever order the fetches complete in.
 *
 * A sitemap goes through three steps, each in its own file: fetch one (`fetch-step`: the request,
 * redirects, off-site checks), parse (`parse-step`: the page budget), children (`children-step`:
 * usp's recursion rules). This class is the sequence around them: claims, revisit plans, the
 * slot, the breaker and the sitemap budget before; the document hook and the children after.
 */
export class Walk extends WalkState {
  async fetch(task: FetchTask): Promise<FetchResult> {
    const place = task.place;
    if (place === undefined) return this.#fetchTask(task);
    let node: Sitemap | null = null;
    try {
      const result = await this.#fetchTask(task);
      node = result.node;
      return result;
    } finally {
      // Settled here when the walk never reached its node's children (unfetched, failed, a leaf).
      place.built(node);
      place.listed([]);
    }
  }

  async #fetchTask(task: FetchTask): Promise<FetchResult> {
    // Claimed before any await, so sitemaps named at once are claimed in the order named.
    const repeat = this.claim(safeKey(task.url), task);
    if (repeat !== null)
      return skippedTask(this.config.hooks, task, 'repeat', this.repeated(task, task.url, repeat));
    if (this.config.hostPolicy === 'same-site') await loadPublicSuffixList();
    if (this.halted) return this.unfetched(task);
    const plan = hook(() => this.config.hooks.revisit?.plan(task.url, task.lastModified));
    if (plan?.reuse !== undefined) return this.#replay(task, plan.reuse, 'skipped');
    const got = this.slots.acquire();
    if (!(got === true || (await got))) return this.unfetched(task);
    if (this.halted) {
      this.slots.release();
      return this.unfetched(task);
    }
    const refusal = this.config.breaker?.refusal(task.url) ?? null;
    if (refusal !== null) {
      // The origin was given up earlier in this walk: no request, and no warning per document
      // (the breaker's one warning said so when it opened).
      this.slots.release();
      const reason = `Unable to fetch sitemap from ${task.url}: ${refusal}`;
      return skippedTask(this.config.hooks, task, 'unreachable', this.notRequested(task, reason, null));
    }
    if (this.fetched >= this.config.maxSitemaps) {
      this.slots.release();
      this.stop('maxSitemaps');
      return this.unfetched(task);
    }
    this.fetched++;
    this.inFlight++;
    let result: FetchResult;
    let children: ChildRef[] = [];
    try {
      [result, children] = await fetchOne(this, task, plan);
    } catch (error) {
      // A custom client or parse hook that broke its contract: the sitemap is lost, the walk goes on.
      const node = this.invalidNode(
        task.url,
        `Unable to fetch sitemap from ${task.url}: ${errorText(error)}`,
        task.lastModified,
        'fetch',
      );
      result = this.result(task, node, null);
    } finally {
      this.inFlight--;
      this.slots.release();
    }
    return this.#descend(task, result, children);
  }

  /** Reports the document, then (for an index) fetches its children. */
  async #descend(task: FetchTask, result: FetchResult, children: ChildRef[]): Promise<FetchResult> {
    task.place?.built(result.node);
    if (children.length > 0) result.listed = children.length;
    const onDocument = this.config.hooks.onDocument;
    if (onDocument !== undefined) {
      hook(() =>
        onDocument({
          requestedUrl: result.requestedUrl,
          node: result.node,
          parentUrl: task.parentUrl ?? null,
          level: task.level,
          children,
          reused: result.reused ?? null,
          response: result.response ?? null,
          stored: result.stored ?? null,
        }),
      );
    }
    // Children are fetched after the slot is given back: a parent never holds a slot while it waits.
    if (result.node instanceof AbstractIndexSitemap && children.length > 0) {
      await fetchChildren(this, {
        task,
        index: result.node,
        requestedUrl: result.requestedUrl,
        refs: children,
      });
    }
    this.done++;
    this.progress();
    return result;
  }

  /** A document not requested: the stored copy stands for it, and its stored children are walked. */
  #replay(task: FetchTask, doc: StoredDocument, reused: ReuseKind): Promise<FetchResult> {
    const [result, children] = this.replayed(task, doc, reused);
    return this.#descend(task, result, children);
  }
}
