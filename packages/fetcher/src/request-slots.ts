import type { KeepAlive } from './keep-alive.js';
import { HostSpacing, KeyedSemaphore, type Release, Semaphore } from './limiter.js';
import type { ResolvedOptions } from './options.js';
import { Stop, type StopSignal } from './stop-signal.js';

/** A request's two slots, its host's and the client's, and the host spacing before it. */
export class RequestSlots {
  private readonly global: Semaphore;
  private readonly perHost: KeyedSemaphore;
  private readonly spacing: HostSpacing;

  constructor(options: ResolvedOptions, keepAlive: KeepAlive) {
    this.global = new Semaphore(options.maxConcurrentRequests);
    this.perHost = new KeyedSemaphore(options.maxConnectionsPerHost);
    this.spacing = new HostSpacing(options.perHostDelayMs, keepAlive);
  }

  /**
   * The host's and the global slot at once when both are free and no spacing applies: the usual
   * case (a batch's gate keeps within both limits), and no promise or microtask on it.
   */
  takeFree(host: string): Release | null {
    if (!this.spacing.none) return null;
    const releaseHost = this.perHost.tryAcquire(host);
    if (releaseHost === null) return null;
    const releaseGlobal = this.global.tryAcquire();
    if (releaseGlobal === null) {
      releaseHost();
      return null;
    }
    return releaseBoth(releaseGlobal, releaseHost);
  }

  async acquire(host: string, life: StopSignal): Promise<Release> {
    const stop = () => new Stop();
    const releaseHost = await this.perHost.acquire(host, life).catch((e) => {
      throw life.aborted ? stop() : e;
    });
    try {
      await this.spacing.wait(host, life);
      return releaseBoth(await this.global.acquire(life), releaseHost);
    } catch (e) {
      releaseHost();
      throw life.aborted ? stop() : e;
    }
  }
}

/** One release for the global and the host slot of a request; a second call does nothing. */
function releaseBoth(releaseGlobal: Release, releaseHost: Release): Release {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    releaseGlobal();
    releaseHost();
  };
}
