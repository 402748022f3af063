import { UspError, type UspErrorCode } from '@usp-ts/core';

/**
 * Stable codes of a request that produced no usable response (`WebErrorResponse.code`,
 * `RetryInfo.code`). An error the fetcher throws carries the matching `UspErrorCode`
 * (`timeout` is `USP_TIMEOUT`, ...; see `errorCodeOf`).
 */
export type WebErrorCode =
  | 'http-status'
  | 'timeout'
  | 'connection'
  | 'dns'
  | 'tls'
  | 'protocol'
  | 'redirect-limit'
  | 'blocked'
  | 'too-large'
  | 'decoding'
  | 'invalid-url'
  | 'aborted'
  | 'closed';

const ERROR_CODES = {
  'http-status': 'USP_HTTP_STATUS',
  timeout: 'USP_TIMEOUT',
  connection: 'USP_CONNECTION',
  dns: 'USP_DNS',
  tls: 'USP_TLS',
  protocol: 'USP_PROTOCOL',
  'redirect-limit': 'USP_REDIRECT_LIMIT',
  blocked: 'USP_BLOCKED',
  'too-large': 'USP_TOO_LARGE',
  decoding: 'USP_DECODING',
  'invalid-url': 'USP_INVALID_URL',
  aborted: 'USP_ABORTED',
  closed: 'USP_CLOSED',
} as const satisfies Record<WebErrorCode, UspErrorCode>;

/** The error code of the fetcher's errors: one of core's, one for each `WebErrorCode`. */
export type WebClientErrorCode = (typeof ERROR_CODES)[WebErrorCode];

/** The `UspErrorCode` an error of this `WebErrorCode` carries. */
export function errorCodeOf(code: WebErrorCode): WebClientErrorCode {
  return ERROR_CODES[code];
}

/** Base class of everything the fetcher throws (a `UspError`); branch on `code`. */
export class WebClientError extends UspError {
  declare readonly code: WebClientErrorCode;
  /** The URL being fetched when it happened. */
  readonly url: string;
  constructor(code: WebClientErrorCode, url: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'WebClientError';
    this.code = code;
    this.url = url;
  }
}

/**
 * Thrown by body iteration when the body breaks off: `USP_TOO_LARGE` (a cap was passed),
 * `USP_TIMEOUT`, `USP_CONNECTION` (reset, early close, wrong Content-Length), `USP_DECODING`
 * (corrupt Content-Encoding data) or `USP_CLOSED` (the client was closed). Bytes yielded before
 * it count.
 */
export class WebBodyError extends WebClientError {
  /** Bytes of (decoded) body delivered before the break. */
  readonly bytesDelivered: number;
  constructor(
    code: WebClientErrorCode,
    url: string,
    message: string,
    bytesDelivered: number,
    options?: { cause?: unknown },
  ) {
    super(code, url, message, options);
    this.name = 'WebBodyError';
    this.bytesDelivered = bytesDelivered;
  }
}

/** The caller's `AbortSignal` fired: `get` rejects with this, and so does body iteration. */
export class WebAbortError extends WebClientError {
  constructor(url: string, reason?: unknown) {
    super('USP_ABORTED', url, `Request for ${url} was aborted`, { cause: reason });
    // Named like the DOM's error so `err.name === 'AbortError'` checks written for fetch still work.
    this.name = 'AbortError';
  }
}

/**
 * Raised inside the connector when the SSRF guard refuses an address (`USP_BLOCKED`); surfaces
 * as a `WebErrorResponse` with code `blocked`.
 */
export class BlockedAddressError extends WebClientError {
  readonly host: string;
  readonly address: string;
  readonly category: string;
  constructor(host: string, address: string, category: string) {
    const where = host === address ? address : `${host} (${address})`;
    super(
      'USP_BLOCKED',
      host,
      `Refused to connect to ${where}: ${category} address; private networks are not allowed (option allowPrivateNetworks)`,
    );
    this.name = 'BlockedAddressError';
    this.host = host;
    this.address = address;
    this.category = category;
  }
}
