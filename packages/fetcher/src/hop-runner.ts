import {
  headerLookup,
  type WebNotModifiedResponse,
  type WebRequestOptions,
  type WebResponse,
} from '@usp-ts/core';
import type { Dispatcher } from 'undici';
import { assertPublicHost, assertPublicLiteral } from './address-guard.js';
import { classifyNetworkError } from './classify.js';
import type { Dispatchers } from './dispatchers.js';
import { BlockedAddressError, type WebErrorCode } from './errors.js';
import { type HopRequestOptions, type HopResponse, hopRequest } from './hop-request.js';
import { type HopSuccess, type SuccessParts, successResponse } from './hop-success.js';
import type { ResolvedOptions } from './options.js';
import { isProxyFailure, proxyName } from './proxy-failure.js';
import { proxyFor } from './proxy-routes.js';
import type { RequestSlots } from './request-slots.js';
import { firstHeader, reasonPhrase } from './request-url.js';
import { parseRetryAfter, RETRYABLE_STATUSES } from './retry.js';
import { type CallerSignals, onStop, Stop, StopSignal } from './stop-signal.js';
import type { TimeBudget } from './time-budget.js';
import type { UndiciParts } from './undici.js';
import type { FetchErrorResponse } from './web-client.js';

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** A drained error or redirect body up to this size keeps its connection for reuse. */
const DRAIN_LIMIT_BYTES = 64 * 1024;
const DRAIN_TIMEOUT_MS = 5_000;
const noop = () => {};

/** One request of an attempt: the first, or one after a redirect. */
export interface Hop {
  /** The URL asked for now. */ readonly current: URL;
  /** The attempt's first URL: the caller's headers go to its origin only. */
  readonly start: URL;
  /** The URL the caller asked for, which error responses name. */
  readonly requestedUrl: string;
  /** The URLs redirected from so far. */
  readonly redirects: readonly string[];
  readonly request: WebRequestOptions;
  /** Aborted when the caller or the client gives up. */
  readonly life: StopSignal;
  /** The attempt's time budget, shared by its hops and the body. */
  readonly budget: TimeBudget;
  readonly attempt: number;
}

export type HopResult =
  | { readonly kind: 'final'; readonly response: WebResponse }
  | {
      readonly kind: 'redirect';
      readonly location: string;
      readonly status: number;
      readonly statusText: string;
    };

/** Resolves after the event loop's next check phase (after the immediates already queued). */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Lets go of a body we do not want, keeping the connection when it is small enough to drain. */
function discard(body: Dispatcher.ResponseData['body'], status: number): void {
  body.on('error', noop);
  // A 304 has no body (the parser knows): nothing to limit or time, so no dump (a promise, a
  // timer and three listeners), one less per 304 of a no-change batch run.
  if (status === 304) {
    body.resume();
    return;
  }
  body.dump({ limit: DRAIN_LIMIT_BYTES, signal: AbortSignal.timeout(DRAIN_TIMEOUT_MS) }).catch(noop);
}

/** What a hop needs of its client: shared parts, made once per client. */
export interface HopParts {
  readonly options: ResolvedOptions;
  readonly dispatchers: Dispatchers;
  readonly slots: RequestSlots;
  readonly undici: UndiciParts;
  /** Everything that must stop when the client closes: a body being read adds itself. */
  readonly closers: Set<() => void>;
  /** The callers' signals: a body being read listens to its request's. */
  readonly callerSignals: CallerSignals;
}

/**
 * One request of an attempt and its answer: the private-network check, the slots, the request
 * under the attempt's time budget, and the answer as a final response (a body to read, an error,
 * a 304) or a redirect to follow.
 */
export class HopRunner {
  private readonly options: ResolvedOptions;
  private readonly dispatchers: Dispatchers;
  private readonly slots: RequestSlots;
  private readonly undici: UndiciParts;
  /** What a 2xx answer's body needs of the client. */
  private readonly bodyParts: SuccessParts;
  /** The headers every request carries, to any origin. */
  private readonly baseHeaders: Readonly<Record<string, string>>;
  /** The headers every request to the origin asked for carries, made once (keys lower-case). */
  private readonly originHeaders: Readonly<Record<string, string>>;

  constructor(parts: HopParts) {
    this.options = parts.options;
    this.dispatchers = parts.dispatchers;
    this.slots = parts.slots;
    this.undici = parts.undici;
    this.bodyParts = { options: parts.options, closers: parts.closers, callerSignals: parts.callerSignals };
    this.baseHeaders = { 'user-agent': this.options.userAgent, 'accept-encoding': 'gzip, deflate, br' };
    const h: Record<string, string> = { ...this.baseHeaders };
    for (const [k, v] of Object.entries(this.options.headers)) h[k.toLowerCase()] = v;
    this.originHeaders = h;
  }

  private requestHeaders(current: URL, start: URL, request: WebRequestOptions): Record<string, string> {
    // Headers the caller set are meant for the origin asked for (a cookie, an API key): like
    // `Authorization` in fetch, none of them follows a redirect to another origin.
    let h: Record<string, string>;
    if (current === start || current.origin === start.origin) {
      // Object.assign, not a spread: V8 gives each object made by `{ ...x }` a map of its own,
      // and undici's reads of the headers would miss their caches on every request.
      h = Object.assign({}, this.originHeaders);
      if (request.headers !== undefined)
        for (const [k, v] of Object.entries(request.headers)) h[k.toLowerCase()] = v;
    } else {
      h = Object.assign({}, this.baseHeaders);
    }
    if (request.ifNoneMatch !== undefined) h['if-none-match'] = request.ifNoneMatch;
    if (request.ifModifiedSince !== undefined) h['if-modified-since'] = request.ifModifiedSince;
    return h;
  }

  async run(hop: Hop): Promise<HopResult> {
    const { current, start, requestedUrl, redirects, request, life, budget, attempt } = hop;
    const o = this.options;
    const proxy = proxyFor(current, o.proxy);
    if (
      !o.allowPrivateNetworks &&
      !this.dispatchers.privateAllowed(current.protocol, current.hostname, current.port)
    ) {
      try {
        if (proxy !== undefined) await assertPublicHost(current.hostname);
        else assertPublicLiteral(current.hostname);
      } catch (e) {
        if (!(e instanceof BlockedAddressError)) throw e;
        return {
          kind: 'final',
          response: errorResponse(requestedUrl, null, 'blocked', e.message, false, attempt),
        };
      }
    }
    const hostname = current.hostname;
    const release = this.slots.takeFree(hostname) ?? (await this.slots.acquire(hostname, life));
    // Built by the getter on every read: once per hop.
    const origin = current.origin;
    // A direct request waits for a connection of its host when each is busy (see
    // `OriginClients`); one through a proxy waits a turn, as one of the proxy Pool's connections
    // may be about to be free (an answer resolves at its head; a body drained here may still be
    // arriving).
    let dispatcher: Dispatcher | null;
    if (proxy !== undefined) {
      await nextTurn();
      dispatcher = this.dispatchers.proxied(proxy);
    } else {
      dispatcher = this.dispatchers.direct(origin) ?? (await this.dispatchers.waitDirect(origin, life));
    }
    if (dispatcher === null || life.aborted) {
      release();
      throw new Stop();
    }
    // undici takes an EventEmitter as the request's signal: see StopSignal.
    const requestCtl = new StopSignal();
    const unlinkLife = onStop(life, () => requestCtl.abort(life.reason));
    let timedOut = false;
    budget.run(() => {
      timedOut = true;
      requestCtl.abort(new Error('requestTimeoutMs passed'));
    });
    let data: HopResponse;
    try {
      data = await this.send(dispatcher, {
        origin,
        ends: proxy === undefined ? this.dispatchers : null,
        path: `${current.pathname}${current.search}`,
        headers: this.requestHeaders(current, start, request),
        signal: requestCtl,
        drainLimitBytes: DRAIN_LIMIT_BYTES,
        drainTimeoutMs: DRAIN_TIMEOUT_MS,
      });
    } catch (e) {
      budget.pause();
      unlinkLife();
      release();
      if (life.aborted) throw new Stop();
      if (timedOut) {
        const message = `Request timed out: requestTimeoutMs (${o.requestTimeoutMs} ms) passed before the response`;
        return {
          kind: 'final',
          response: errorResponse(requestedUrl, null, 'timeout', message, true, attempt),
        };
      }
      const c = classifyNetworkError(e);
      if (proxy !== undefined && isProxyFailure(e, proxy)) {
        const name = proxyName(proxy);
        const message = `Proxy ${name} failed: ${c.message}`;
        const response = errorResponse(requestedUrl, null, c.code, message, c.retryable, attempt);
        (response as { proxy?: string }).proxy = name;
        return { kind: 'final', response };
      }
      return {
        kind: 'final',
        response: errorResponse(requestedUrl, null, c.code, c.message, c.retryable, attempt),
      };
    }
    budget.pause();
    unlinkLife();
    const { statusCode: status, headers } = data;
    const statusText = reasonPhrase(status, data.statusText);

    if (status >= 200 && status < 300 && data.body !== null) {
      return {
        kind: 'final',
        response: successResponse(this.bodyParts, {
          data: data as HopSuccess['data'],
          current,
          redirects,
          statusText,
          request,
          requestCtl,
          budget,
          release,
        }),
      };
    }
    release();
    const location = firstHeader(headers.location);
    if (REDIRECT_STATUSES.has(status) && location !== null) {
      let resolved: string;
      try {
        resolved = new URL(location, current).href;
      } catch {
        resolved = location;
      }
      return { kind: 'redirect', location: resolved, status, statusText };
    }
    if (status === 304) {
      const notModified: WebNotModifiedResponse = {
        kind: 'not-modified',
        url: current.href,
        headers: headerLookup(headers),
      };
      return { kind: 'final', response: notModified };
    }
    const retryAfterMs = parseRetryAfter(firstHeader(headers['retry-after'])) ?? undefined;
    const response = errorResponse(
      requestedUrl,
      status,
      'http-status',
      `${status} ${statusText}`.trim(),
      RETRYABLE_STATUSES.has(status),
      attempt,
    );
    if (retryAfterMs !== undefined) (response as { retryAfterMs?: number }).retryAfterMs = retryAfterMs;
    return { kind: 'final', response };
  }

  /**
   * One GET: through `hopRequest` (no stream for an answer whose body is not read), or undici's
   * `request` when its files moved.
   */
  private send(dispatcher: Dispatcher, options: HopRequestOptions): Promise<HopResponse> {
    const hop = this.undici.hop;
    // Not an async function: the usual path hands hopRequest's promise on as it is.
    if (hop !== null) return hopRequest(dispatcher, hop, options);
    return this.sendByRequest(dispatcher, options);
  }

  private async sendByRequest(dispatcher: Dispatcher, options: HopRequestOptions): Promise<HopResponse> {
    const { origin, path, signal, ends } = options;
    let data: Dispatcher.ResponseData;
    try {
      data = await this.undici.request.call(dispatcher, {
        origin,
        path,
        headers: options.headers,
        signal,
        method: 'GET',
      });
    } catch (e) {
      ends?.ended(origin);
      throw e;
    }
    // Its connection is free once the body is over (read, drained or dropped).
    if (ends !== null) data.body.once('close', () => ends.ended(origin));
    const { statusCode, statusText, headers } = data;
    if (statusCode >= 200 && statusCode < 300) return { statusCode, statusText, headers, body: data.body };
    discard(data.body, statusCode);
    return { statusCode, statusText, headers, body: null };
  }
}

export function errorResponse(
  url: string,
  status: number | null,
  code: WebErrorCode,
  message: string,
  retryable: boolean,
  attempts: number,
): FetchErrorResponse {
  return { kind: 'error', url, status, message, code, retryable, attempts };
}
