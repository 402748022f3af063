// Stand-in for the batch package's politeness-gate interface until it is on main; replaced by a
// re-export of `@usp-ts/batch`'s type then, so both gates keep one contract.

/** Called once to give a request slot back; further calls do nothing. */
export type Release = () => void;

/** Per-host politeness: how many requests in flight to one host, and how far apart they start. */
export interface PolitenessGate {
  /**
   * Waits until a request to `host` may start and reserves the slot; call the returned release
   * when the request has ended (body read or abandoned). Rejects with the signal's reason on abort.
   */
  acquire(host: string, signal?: AbortSignal): Promise<Release>;
  /** The host's Crawl-delay (already capped by the caller): least time between request starts. 0 removes it. */
  setCrawlDelay(host: string, delayMs: number): Promise<void>;
}
