import type { Sitemap } from '../contract/sitemap.js';

/** What `TreeOptions.onTreeNode` sees: a node of the tree the walk returns, and its depth there. */
export interface TreeNodeEvent {
  readonly node: Sitemap;
  /** Its depth in the returned tree: the children of a homepage walk's root are at 1. */
  readonly depth: number;
}

/** `TreeOptions.onTreeNode`: awaited before the next node is reported. */
export type TreeNodeListener = (event: TreeNodeEvent) => void | Promise<void>;

/**
 * One place in the tree a walk builds: the node that will stand there once it is built (`null`
 * when the tree will not hold it, such as a dropped top-level probe), then the places of its
 * children, in the order its `subSitemaps` will hold them. Each is settled once; later calls
 * are ignored, so a walk can settle a place early and again, safely, when its fetch returns.
 */
export class TreePlace {
  readonly node: Promise<Sitemap | null>;
  readonly children: Promise<readonly TreePlace[]>;
  #built: ((node: Sitemap | null) => void) | null = null;
  #listed: ((children: readonly TreePlace[]) => void) | null = null;
  readonly #keep: (node: Sitemap) => boolean;

  constructor(keep: (node: Sitemap) => boolean = () => true) {
    this.#keep = keep;
    this.node = new Promise((resolve) => {
      this.#built = resolve;
    });
    this.children = new Promise((resolve) => {
      this.#listed = resolve;
    });
  }

  /** A place whose node is known at once and has no children (an index entry refused outright). */
  static of(node: Sitemap): TreePlace {
    const place = new TreePlace();
    place.built(node);
    place.listed([]);
    return place;
  }

  built(node: Sitemap | null): void {
    const resolve = this.#built;
    this.#built = null;
    resolve?.(node !== null && this.#keep(node) ? node : null);
  }

  listed(children: readonly TreePlace[]): void {
    const resolve = this.#listed;
    this.#listed = null;
    resolve?.(children);
  }
}

/**
 * Reports the nodes of the walk's tree to `listener` in the tree's depth-first order, each once
 * it is built and every node before it was reported. Places are added in tree order as the walk
 * learns them (a homepage's robots.txt first, its known paths once robots.txt is done). A
 * listener that throws ends the reports; the walk goes on (a hook never breaks a crawl).
 */
export class TreeOrder {
  readonly #listener: TreeNodeListener;
  #chain: Promise<void> = Promise.resolve();
  #failed = false;

  constructor(listener: TreeNodeListener) {
    this.#listener = listener;
  }

  /** Queues `places` (siblings, in order) at `depth`, after everything queued before. */
  add(places: readonly TreePlace[], depth: number): void {
    this.#chain = this.#chain.then(async () => {
      for (const place of places) {
        if (this.#failed) return;
        await this.#report(place, depth);
      }
    });
  }

  /** Settles once every node queued so far was reported (or the listener failed). */
  done(): Promise<void> {
    return this.#chain;
  }

  async #report(place: TreePlace, depth: number): Promise<void> {
    const node = await place.node;
    if (node === null || this.#failed) return;
    try {
      await this.#listener({ node, depth });
    } catch {
      this.#failed = true;
      return;
    }
    for (const child of await place.children) {
      if (this.#failed) return;
      await this.#report(child, depth + 1);
    }
  }
}
