import type { WalkSummary, WebClient, WebResponse } from '@usp-ts/core';
import type { FetchErrorResponse } from '@usp-ts/fetcher';

/**
 * Keeps the first request of a walk that got no HTTP response, to say in the closing line what
 * the user can do about it: a proxy that failed is named as such (the site was never tried), a
 * certificate that did not verify points to `--insecure` and `--ca-file`.
 */
export class FirstNetworkFailure {
  #first: FetchErrorResponse | null = null;

  /** `client` with its answers watched; only `get` is used by a walk given a client. */
  watch(client: WebClient): WebClient {
    return {
      get: async (url, options) => {
        const res: WebResponse = await client.get(url, options);
        if (this.#first === null && res.kind === 'error' && res.status === null) {
          this.#first = res as FetchErrorResponse;
        }
        return res;
      },
    };
  }

  get first(): FetchErrorResponse | null {
    return this.#first;
  }
}

/**
 * The one stderr line of `usp ls` for a walk that ended `unreachable`. `proxySource` says where
 * the proxy came from (`--proxy`, or the environment variable), for a proxy failure.
 */
export function unreachableLine(
  url: string,
  summary: WalkSummary,
  failure: FetchErrorResponse | null,
  proxySource: string,
): string {
  if (failure?.proxy !== undefined && summary.reason?.includes(failure.message) === true) {
    const prefix = `Proxy ${failure.proxy} failed: `;
    const why = failure.message.startsWith(prefix) ? failure.message.slice(prefix.length) : failure.message;
    return `usp: ${url}: proxy ${failure.proxy} (${proxySource}) failed, the site was not reached: ${why}`;
  }
  const tls =
    failure?.code === 'tls' && summary.reason?.includes(failure.message) === true
      ? ' (the certificate did not verify: --ca-file FILE trusts a private certificate authority, --insecure skips the check)'
      : '';
  return `usp: ${url}: site unreachable: ${summary.reason}${tls}`;
}
