import type { Readable } from 'node:stream';
import { headerLookup, type WebRequestOptions, type WebSuccessResponse } from '@usp-ts/core';
import { ResponseBody } from './body.js';
import { parseContentEncoding } from './content-coding.js';
import { WebAbortError, WebBodyError } from './errors.js';
import type { HopResponse } from './hop-request.js';
import type { Release } from './limiter.js';
import type { ResolvedOptions } from './options.js';
import type { CallerSignals, StopSignal } from './stop-signal.js';
import type { TimeBudget } from './time-budget.js';

/** zlib output chunk: Node's 16 KiB default is two to three times slower on sitemap-sized bodies. */
const ZLIB_CHUNK_BYTES = 128 * 1024;

/** A 2xx answer to a hop, which becomes the response with its body. */
export interface HopSuccess {
  readonly data: HopResponse & { readonly body: Readable };
  readonly current: URL;
  readonly redirects: readonly string[];
  readonly statusText: string;
  readonly request: WebRequestOptions;
  /** Aborts the request, and with it the body's socket. */
  readonly requestCtl: StopSignal;
  readonly budget: TimeBudget;
  /** Frees the hop's host and global slots once the body is done. */
  readonly release: Release;
}

/** What a 2xx answer's body needs of its client. */
export interface SuccessParts {
  readonly options: ResolvedOptions;
  /** Everything that must stop when the client closes: the body adds itself while it is read. */
  readonly closers: Set<() => void>;
  readonly callerSignals: CallerSignals;
}

/**
 * The response of a 2xx answer: its body decoded and capped under the attempt's time budget,
 * failed by the caller's abort or the client's close, its slots freed once it is done.
 */
export function successResponse(parts: SuccessParts, ok: HopSuccess): WebSuccessResponse {
  const { data, current, redirects, statusText, request, requestCtl, budget, release } = ok;
  const { options, closers } = parts;
  const url = current.href;
  const signal = request.signal;
  const lookup = headerLookup(data.headers);
  const codings = parseContentEncoding(lookup('content-encoding')) ?? [];
  let unlinkSignal: (() => void) | null = null;
  const onClose = () => body.fail(new WebBodyError('USP_CLOSED', url, 'The web client was closed', 0));
  const body = new ResponseBody({
    url,
    raw: data.body,
    codings,
    maxBodyBytes: options.maxBodyBytes,
    maxDecodedBytes: options.maxDecodedBytes,
    zlibChunkBytes: ZLIB_CHUNK_BYTES,
    budget,
    abortRequest: (reason) => requestCtl.abort(reason),
    onSettle: () => {
      release();
      unlinkSignal?.();
      closers.delete(onClose);
    },
  });
  if (signal !== undefined)
    unlinkSignal = parts.callerSignals.on(signal, () => body.fail(new WebAbortError(url, signal.reason)));
  closers.add(onClose);
  return {
    kind: 'ok',
    status: data.statusCode,
    statusText,
    url,
    redirects: [...redirects],
    headers: lookup,
    body,
    cancel: () => body.cancel(),
  };
}
