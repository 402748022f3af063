import type { WebClient, WebErrorResponse, WebRequestOptions, WebResponse } from '@usp-ts/core';
import { Dispatchers } from './dispatchers.js';
import { WebAbortError, type WebErrorCode } from './errors.js';
import { errorResponse, HopRunner } from './hop-runner.js';
import { KeepAlive } from './keep-alive.js';
import { sleep } from './limiter.js';
import { type ResolvedOptions, type RetryInfo, resolveOptions, type WebClientOptions } from './options.js';
import { RequestSlots } from './request-slots.js';
import { parseHttpUrl } from './request-url.js';
import { backoffDelay } from './retry.js';
import { CallerSignals, StopSignal } from './stop-signal.js';
import { BudgetClock, TimeBudget } from './time-budget.js';
import { undiciCore } from './undici.js';
import { DEFAULT_USER_AGENT } from './version.js';

/** An error response with what the fetcher knows beyond core's interface. */
export interface FetchErrorResponse extends WebErrorResponse {
  readonly code: WebErrorCode;
  /** Attempts made, the first included. */
  readonly attempts: number;
  /** The server's `Retry-After`, in ms, when it sent one. */
  readonly retryAfterMs?: number;
  /**
   * The proxy (`scheme://host:port`, no credentials) when the failure was the proxy's rather
   * than the site's: unreachable, or refusing the tunnel. The message then starts `Proxy ... failed`.
   */
  readonly proxy?: string;
}

/** The web client `createWebClient` returns. */
export interface FetcherWebClient extends WebClient {
  get(url: string, options?: WebRequestOptions): Promise<WebResponse>;
  /**
   * Aborts what is in flight (pending `get`s resolve to a `closed` error, bodies being read
   * throw `closed`) and closes every connection. Later `get`s answer `closed`.
   */
  close(): Promise<void>;
  /** The options in force, defaults filled in. */
  readonly options: ResolvedOptions;
  /**
   * Lets the client's sockets and timers keep the process alive again (the default): a socket
   * holds the event loop while it has requests, as in plain undici; an idle one does not.
   */
  ref(): void;
  /**
   * From now on no socket or timer of this client keeps the process alive, in flight or not (a
   * response body left half-read included): the process exits when nothing else holds it.
   * Requests go on as long as something else does. For a caller that waits on the client only
   * at times (a walk between two `next()` calls). A DNS lookup under way still holds the
   * process until it answers, and so does a `proxy`'s CONNECT exchange.
   */
  unref(): void;
  /**
   * Closes the idle connections to these host names now, rather than after `keepAliveTimeoutMs`
   * (connections with a request on them are left alone; a later request opens a new one). For a
   * caller that knows it is done with a host for a while, such as a batch whose site ended.
   */
  closeIdle(hosts: Iterable<string>): void;
}

/** Shared by every request without a redirect: read only, a redirect makes a new list. */
const NO_REDIRECTS: readonly string[] = [];

/** Creates a web client on shared undici dispatchers. Call `close()` when done with it. */
export function createWebClient(options: WebClientOptions = {}): FetcherWebClient {
  return new UndiciWebClient(resolveOptions(options, DEFAULT_USER_AGENT));
}

/**
 * The client: a `get` is attempts (retries with backoff, `Retry-After`, the caller's
 * `shouldRetry`), each attempt its hops (redirects) under one time budget; `HopRunner` sends
 * each hop.
 */
class UndiciWebClient implements FetcherWebClient {
  readonly options: ResolvedOptions;
  private readonly keepAlive = new KeepAlive();
  /** The running time budgets of every request. */
  private readonly clock = new BudgetClock();
  private readonly dispatchers: Dispatchers;
  private readonly hops: HopRunner;
  /** Everything that must stop when the client closes. */
  private readonly closers = new Set<() => void>();
  /** The callers' signals, one listener each (see CallerSignals). */
  private readonly callerSignals = new CallerSignals();
  private closed = false;

  constructor(options: ResolvedOptions) {
    this.options = options;
    this.dispatchers = new Dispatchers(options, this.keepAlive);
    this.hops = new HopRunner({
      options,
      dispatchers: this.dispatchers,
      slots: new RequestSlots(options, this.keepAlive),
      // undici is loaded with the first client, not with this module: a program that only parses
      // documents (or imports the meta-package for its types) never pays for the HTTP stack.
      undici: undiciCore(),
      closers: this.closers,
      callerSignals: this.callerSignals,
    });
  }

  ref(): void {
    this.keepAlive.ref();
  }

  closeIdle(hosts: Iterable<string>): void {
    this.keepAlive.closeIdle(hosts);
  }

  unref(): void {
    this.keepAlive.unref();
  }

  async get(url: string, request: WebRequestOptions = {}): Promise<WebResponse> {
    const signal = request.signal;
    if (signal?.aborted) throw new WebAbortError(url, signal.reason);
    if (this.closed) return this.closedResponse(url, 0);
    const start = parseHttpUrl(url);
    if (start === null)
      return errorResponse(url, null, 'invalid-url', `Not an absolute http(s) URL: ${url}`, false, 0);

    // One signal for the whole get: the caller's abort and the client's close both end it.
    const life = new StopSignal();
    const onClose = () => life.abort(new Error('closed'));
    const unlinkSignal =
      signal === undefined ? null : this.callerSignals.on(signal, () => life.abort(signal.reason));
    this.closers.add(onClose);
    let attempt = 0;
    try {
      for (attempt = 1; ; attempt++) {
        const res = await this.attempt(start, url, request, life, attempt);
        if (res.kind !== 'error') return res;
        const err = res as FetchErrorResponse;
        const o = this.options;
        // No response at all: a host that refused or stayed silent twice rarely answers a third time.
        const maxAttempts = err.status === null ? Math.min(o.networkAttempts, o.retries) : o.retries;
        if (!err.retryable || attempt >= maxAttempts) return err;
        // The caller (a walk's breaker) may have given up on this origin while we waited.
        if (request.shouldRetry !== undefined && !request.shouldRetry(err)) return err;
        const backoff = backoffDelay(attempt, o.baseDelayMs, o.maxDelayMs);
        let delay = backoff;
        if (err.retryAfterMs !== undefined) {
          // Waiting longer than the cap would stall a walk; giving up now leaves the choice to the caller.
          if (err.retryAfterMs > o.maxRetryAfterMs) return err;
          // `Retry-After: 0` from a server that is overloaded must not turn retries into a burst.
          delay = Math.max(err.retryAfterMs, backoff);
        }
        const info: RetryInfo = {
          url,
          attempt,
          maxAttempts,
          code: err.code,
          status: err.status,
          reason: err.message,
          delayMs: delay,
        };
        if (o.onRetry !== undefined) {
          try {
            o.onRetry(info);
          } catch {
            // A logging hook that throws must not change what the request does.
          }
        }
        await sleep(delay, life, this.keepAlive);
        if (request.shouldRetry !== undefined && !request.shouldRetry(err)) return err;
      }
    } catch (e) {
      if (signal?.aborted) throw new WebAbortError(url, signal.reason);
      if (this.closed) return this.closedResponse(url, attempt);
      throw e;
    } finally {
      unlinkSignal?.();
      this.closers.delete(onClose);
    }
  }

  /** One attempt: the request and every redirect hop, under one time budget. */
  private async attempt(
    start: URL,
    requestedUrl: string,
    request: WebRequestOptions,
    life: StopSignal,
    attempt: number,
  ): Promise<WebResponse> {
    const budget = new TimeBudget(this.options.requestTimeoutMs, this.keepAlive, this.clock);
    // Made at the first redirect: most requests have none.
    let redirects: readonly string[] = NO_REDIRECTS;
    let seen: Set<string> | null = null;
    let current = start;
    while (true) {
      const hop = await this.hops.run({
        current,
        start,
        requestedUrl,
        redirects,
        request,
        life,
        budget,
        attempt,
      });
      if (hop.kind === 'final') return hop.response;
      seen ??= new Set<string>([start.href]);
      const next = parseHttpUrl(hop.location);
      if (next === null) {
        return errorResponse(
          requestedUrl,
          hop.status,
          'invalid-url',
          `Redirect from ${current.href} to an unsupported URL: ${hop.location}`,
          false,
          attempt,
        );
      }
      if (seen.has(next.href)) {
        return errorResponse(
          requestedUrl,
          hop.status,
          'redirect-limit',
          `Redirect loop: ${current.href} redirects back to ${next.href}`,
          false,
          attempt,
        );
      }
      if (redirects.length >= this.options.maxRedirects) {
        return errorResponse(
          requestedUrl,
          hop.status,
          'redirect-limit',
          `Too many redirects: more than ${this.options.maxRedirects} from ${requestedUrl}`,
          false,
          attempt,
        );
      }
      redirects = [...redirects, current.href];
      seen.add(next.href);
      current = next;
    }
  }

  private closedResponse(url: string, attempts: number): FetchErrorResponse {
    return errorResponse(url, null, 'closed', 'The web client was closed', false, attempts);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const c of [...this.closers]) c();
    this.closers.clear();
    await this.dispatchers.destroy();
  }
}
