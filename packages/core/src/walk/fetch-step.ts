import { errorText } from '../contract/errors.js';
import type { ChildRef } from '../contract/model.js';
import type { Sitemap } from '../contract/sitemap.js';
import type { SitemapDate } from '../contract/sitemap-date.js';
import type { WebRequestOptions, WebResponse } from '../contract/web-client.js';
import { safeKey, setRepr } from './ancestry.js';
import { ResponseMeter } from './document-response.js';
import { stopText } from './outcome.js';
import { parseStep } from './parse-step.js';
import { type FetchResult, type FetchTask, hook } from './task.js';
import { repeatText, type WalkState } from './walk-state.js';

type OkResponse = Extract<WebResponse, { kind: 'ok' }>;

/** The validators a conditional request sends (a `RevisitPlan` or `conditionalRequest`'s answer). */
export type Validators = { readonly ifNoneMatch?: string; readonly ifModifiedSince?: string };

/**
 * The walk's fetch-one step: requests `task`'s sitemap, turns a failed or unchanged answer into
 * its node, refuses a redirect that loops, repeats or leaves the site, and hands the rest to the
 * parse step. Returns the node and, for an index, the children it lists.
 */
export async function fetchOne(
  walk: WalkState,
  task: FetchTask,
  plan: Validators | undefined,
): Promise<[FetchResult, ChildRef[]]> {
  const { url, lastModified } = task;
  const { hooks } = walk.config;
  const conditional = plan ?? hook(() => hooks.conditionalRequest?.(url));
  const started = performance.now();
  let response: WebResponse;
  try {
    response = await walk.config.webClient.get(url, requestOptions(walk, url, conditional));
  } catch (error) {
    // The client rejects only on abort; anything else from a custom client is reported the same way.
    const message = walk.signal.aborted
      ? stopText(walk.stopReason ?? 'aborted', walk.config)
      : errorText(error);
    return [walk.result(task, fetchFailed(walk, url, message, lastModified, false), null), []];
  }
  walk.record(url, response);
  if (response.kind === 'error') {
    const quiet = task.quiet404 === true && (response.status === 404 || response.status === 410);
    const result = walk.result(task, fetchFailed(walk, url, response.message, lastModified, quiet), null);
    result.response = new ResponseMeter(response.status, null, started);
    return [result, []];
  }
  if (response.kind === 'not-modified') {
    const facts = new ResponseMeter(304, response.headers, started);
    const stored = hook(() => hooks.revisit?.notModified(url));
    if (stored !== undefined) {
      const replayed = walk.replayed(task, stored, 'not-modified');
      replayed[0].response = facts;
      return replayed;
    }
    const node = walk.invalidNode(
      url,
      `Not modified since the last crawl: ${url}`,
      lastModified,
      'not-modified',
    );
    const result = walk.result(task, node, null);
    result.response = facts;
    return [result, []];
  }
  hook(() =>
    hooks.onResponse?.({ url, finalUrl: response.url, status: response.status, headers: response.headers }),
  );
  const facts = new ResponseMeter(response.status, response.headers, started);
  const contentType = response.headers('content-type');
  const refused = refusedRedirect(walk, task, response, contentType);
  if (refused !== null) {
    facts.end();
    refused.response = facts;
    return [refused, []];
  }
  return parseStep(walk, task, response, contentType, facts);
}

/** The request's options. Assigned, not spread in: a conditional spread costs a copy and a throwaway object each. */
function requestOptions(
  walk: WalkState,
  url: string,
  conditional: Validators | undefined,
): WebRequestOptions {
  const { headers, breaker } = walk.config;
  const request: { -readonly [K in keyof WebRequestOptions]: WebRequestOptions[K] } = {
    signal: walk.signal,
  };
  if (breaker !== null) request.shouldRetry = () => breaker.mayRetry(url);
  if (headers !== undefined) request.headers = headers;
  if (conditional?.ifNoneMatch !== undefined) request.ifNoneMatch = conditional.ifNoneMatch;
  if (conditional?.ifModifiedSince !== undefined) request.ifModifiedSince = conditional.ifModifiedSince;
  return request;
}

/**
 * The node for a redirect the walk does not follow (a loop, a sitemap it has, off the site), its
 * body cancelled; `null` for one it follows.
 */
function refusedRedirect(
  walk: WalkState,
  task: FetchTask,
  response: OkResponse,
  contentType: string | null,
): FetchResult | null {
  const { url, lastModified } = task;
  const finalUrl = response.url;
  const finalKey = safeKey(finalUrl);
  if (finalKey !== safeKey(url) && task.ancestry.keys.has(finalKey)) {
    response.cancel();
    const reason = `Recursion detected when ${url} redirected to ${finalUrl} with parent URLs ${setRepr(task.ancestry.urls)}.`;
    return walk.result(task, walk.invalidNode(url, reason, lastModified, 'recursion'), contentType);
  }
  if (finalKey !== safeKey(url)) {
    // A redirect onto a sitemap this walk fetched (or is fetching) already.
    const first = walk.claim(finalKey, task);
    if (first !== null) {
      response.cancel();
      // The result of a request made: counted done once, when the walk reports it.
      const reason = repeatText(url, finalUrl, first);
      return walk.result(task, walk.invalidNode(url, reason, lastModified, 'duplicate-sitemap'), contentType);
    }
  }
  const offSite = walk.offSite(finalUrl);
  if (offSite !== null) {
    response.cancel();
    const reason = `Unable to fetch sitemap from ${url}: redirected to ${finalUrl}, ${offSite}`;
    return walk.result(task, walk.invalidNode(url, reason, lastModified, 'blocked'), contentType);
  }
  return null;
}

function fetchFailed(
  walk: WalkState,
  url: string,
  message: string,
  lastModified: SitemapDate | null,
  quiet: boolean,
): Sitemap {
  return walk.invalidNode(
    url,
    `Unable to fetch sitemap from ${url}: ${message}`,
    lastModified,
    quiet ? null : 'fetch',
  );
}
