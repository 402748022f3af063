import type { CopyIn } from './one-message.js';

// PostgreSQL's binary COPY format: a signature, 32-bit flags and header-extension length (0, 0);
// each row a 16-bit field count and each field as a 32-bit length and its bytes (a `text` its
// UTF-8, a `bytea` its bytes as they are); a field count of -1 ends the data.
const HEADER = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8)]);
const TRAILER = Buffer.from([0xff, 0xff]);

/**
 * A state version's page digests (by sitemap URL) as one binary COPY into `state_digests`, the
 * version's `seq` the column's default (the setting `usp_save_state` makes, schema 5): the digests
 * go as their bytes, where as literals in the statement's text each was encoded by the client,
 * copied with the text several times, then read by the server's parser and decoded. Each digest
 * is its own CopyData message, sent from its memory without a copy. `null` for no digests.
 */
export function digestCopy(site: string, digests: ReadonlyMap<string, Uint8Array>): CopyIn | null {
  if (digests.size === 0) return null;
  const siteBytes = Buffer.from(site);
  const data: Buffer[] = [HEADER];
  for (const [url, pages] of digests) {
    const urlBytes = Buffer.from(url);
    const head = Buffer.allocUnsafe(14 + siteBytes.length + urlBytes.length);
    let at = head.writeInt16BE(3, 0);
    at = head.writeInt32BE(siteBytes.length, at);
    at += siteBytes.copy(head, at);
    at = head.writeInt32BE(urlBytes.length, at);
    at += urlBytes.copy(head, at);
    head.writeInt32BE(pages.byteLength, at);
    data.push(head, Buffer.from(pages.buffer, pages.byteOffset, pages.byteLength));
  }
  data.push(TRAILER);
  return { sql: 'COPY state_digests (site, url, pages) FROM STDIN (FORMAT binary)', data };
}
