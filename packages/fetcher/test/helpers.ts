import { readdirSync } from 'node:fs';
import type { WebResponse, WebSuccessResponse } from '@usp-ts/core';
import { createWebClient, type FetcherWebClient, type WebClientOptions } from '../src/index.js';

/** A client for tests on loopback: private networks allowed, backoff short. */
export function loopbackClient(options: WebClientOptions = {}): FetcherWebClient {
  return createWebClient({ allowPrivateNetworks: true, baseDelayMs: 1, maxDelayMs: 5, ...options });
}

export function expectOk(res: WebResponse): WebSuccessResponse {
  if (res.kind !== 'ok') throw new Error(`expected an ok response, got ${JSON.stringify(res)}`);
  return res;
}

export interface Drained {
  bytes: Buffer;
  error: (Error & { code?: string }) | null;
}

/** Reads a body to its end, keeping what came before an error. */
export async function drain(body: AsyncIterable<Uint8Array>): Promise<Drained> {
  const chunks: Buffer[] = [];
  try {
    for await (const c of body) chunks.push(Buffer.from(c));
    return { bytes: Buffer.concat(chunks), error: null };
  } catch (e) {
    return { bytes: Buffer.concat(chunks), error: e as Error };
  }
}

export async function text(res: WebResponse): Promise<string> {
  const d = await drain(expectOk(res).body);
  if (d.error) throw d.error;
  return d.bytes.toString('utf8');
}

/** Open file descriptors of this process (Linux); `null` elsewhere. */
export function openFds(): number | null {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return null;
  }
}
