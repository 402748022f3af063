import type { Readable } from 'node:stream';
import { type Dispatcher, ProxyAgent } from 'undici';
import type { ResolvedOptions } from './options.js';
import type { Transport, TransportRequest, TransportResponse } from './transport.js';

const DRAIN_LIMIT_BYTES = 64 * 1024;
const DRAIN_TIMEOUT_MS = 5_000;
const noop = () => {};

/** Requests through an HTTP(S) proxy with undici's ProxyAgent. */
export class ProxyTransport implements Transport {
  readonly #dispatcher: Dispatcher;

  constructor(o: ResolvedOptions) {
    const proxy = o.proxy as string;
    this.#dispatcher = new ProxyAgent({
      connections: o.maxConnectionsPerHost,
      headersTimeout: o.headersTimeoutMs,
      bodyTimeout: o.bodyIdleTimeoutMs,
      uri: proxy,
      proxyTls: { timeout: o.connectTimeoutMs },
      requestTls: { rejectUnauthorized: o.tlsVerify, timeout: o.connectTimeoutMs },
    });
  }

  async request(r: TransportRequest): Promise<TransportResponse> {
    const data = await this.#dispatcher.request({
      origin: r.url.origin,
      path: `${r.url.pathname}${r.url.search}`,
      method: 'GET',
      headers: r.headers,
      signal: r.signal,
    });
    return {
      statusCode: data.statusCode,
      statusText: data.statusText,
      headers: data.headers,
      body: data.body,
    };
  }

  discard(body: Readable): void {
    const b = body as Dispatcher.ResponseData['body'];
    b.on('error', noop);
    b.dump({ limit: DRAIN_LIMIT_BYTES, signal: AbortSignal.timeout(DRAIN_TIMEOUT_MS) }).catch(noop);
  }

  async close(): Promise<void> {
    await this.#dispatcher.destroy();
  }
}
