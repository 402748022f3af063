export { type AddressCategory, classifyAddress, hostIsPrivate, isPrivateAddress } from './address-guard.js';
export {
  BlockedAddressError,
  WebAbortError,
  WebBodyError,
  WebClientError,
  type WebClientErrorCode,
  type WebErrorCode,
} from './errors.js';
export {
  DEFAULTS,
  type ResolvedOptions,
  type RetryInfo,
  type WebClientOptions,
  webClientOptionName,
} from './options.js';
export { type ProxyRoutes, proxyFromEnv } from './proxy-routes.js';
export { backoffDelay, parseRetryAfter, RETRYABLE_STATUSES } from './retry.js';
export { DEFAULT_USER_AGENT, VERSION } from './version.js';
export { createWebClient, type FetchErrorResponse, type FetcherWebClient } from './web-client.js';
