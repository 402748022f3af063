/**
 * Stable codes of the fetcher. The same strings appear as `WebErrorResponse.code` (a request
 * that produced no usable response) and as `WebClientError.code` (a body that broke off, an abort).
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

/** Base class of everything the fetcher throws; branch on `code`. */
export class WebClientError extends Error {
  readonly code: WebErrorCode;
  /** The URL being fetched when it happened. */
  readonly url: string;
  constructor(code: WebErrorCode, url: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WebClientError';
    this.code = code;
    this.url = url;
  }
}

/**
 * Thrown by body iteration when the body breaks off: `too-large` (a cap was passed),
 * `timeout`, `connection` (reset, early close, wrong Content-Length), `decoding` (corrupt
 * Content-Encoding data) or `closed` (the client was closed). Bytes yielded before it count.
 */
export class WebBodyError extends WebClientError {
  /** Bytes of (decoded) body delivered before the break. */
  readonly bytesDelivered: number;
  constructor(
    code: WebErrorCode,
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
    super('aborted', url, `Request for ${url} was aborted`, { cause: reason });
    // Named like the DOM's error so `err.name === 'AbortError'` checks written for fetch still work.
    this.name = 'AbortError';
  }
}

/**
 * Raised inside the connector when the SSRF guard refuses an address; surfaces as a
 * `WebErrorResponse` with code `blocked`.
 */
export class BlockedAddressError extends WebClientError {
  readonly host: string;
  readonly address: string;
  readonly category: string;
  constructor(host: string, address: string, category: string) {
    const where = host === address ? address : `${host} (${address})`;
    super(
      'blocked',
      host,
      `Refused to connect to ${where}: ${category} address; private networks are not allowed (option allowPrivateNetworks)`,
    );
    this.name = 'BlockedAddressError';
    this.host = host;
    this.address = address;
    this.category = category;
  }
}
