import { mix32 } from '@usp-ts/core/engine';
/**
 * The URLs already emitted by one sitemap, as 64-bit fingerprints in a flat open-addressing
 * table. A `Set<string>` of 50,000 URLs costs about half of the urlset handler's time (every URL
 * is retained, promoted and rehashed by the garbage collector) and ~130 bytes a URL; this costs
 * 8 bytes a slot (10-16 bytes a URL) and no garbage.
 *
 * Two different URLs share a fingerprint with probability ~n²/2⁶⁵ (about 3·10⁻⁸ for a
 * million-URL sitemap); the later one would then be reported as a duplicate.
 */
export class SeenUrls {
  /** Pairs of 32-bit hashes; (0, 0) marks an empty slot. */
  // Tiny at first so the first growths run within the first few URLs, while the code is still
  // collecting type feedback: a growth first met in optimised code throws that code away (a
  // deopt and a recompile).
  private table = new Int32Array(2 * 16);
  private mask = 15;
  private count = 0;
  /** URLs held before the table grows: half its slots, 0.78 of them from 65,536 slots on. */
  private limit = 7;

  get size(): number {
    return this.count;
  }

  /** Bytes the table holds. */
  get bytes(): number {
    return this.table.byteLength;
  }

  /** Adds `url`; `false` when it was there already. */
  add(url: string): boolean {
    // Two independent multiplicative hashes over the UTF-16 code units, then a murmur3 finaliser.
    let a = 0x811c9dc5 | 0;
    let b = 0x2545f491 | 0;
    // Two code units per step: half the multiply chain of a per-unit loop.
    const n = url.length;
    let i = 0;
    for (; i + 1 < n; i += 2) {
      const c = url.charCodeAt(i) | (url.charCodeAt(i + 1) << 16);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995);
      b ^= b >>> 15;
    }
    if (i < n) {
      const c = url.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995);
      b ^= b >>> 15;
    }
    a = mix32(a ^ url.length);
    b = mix32(b + a) | 1; // never (0, 0)
    const table = this.table;
    const mask = this.mask;
    let slot = (a ^ (b >>> 7)) & mask;
    for (;;) {
      const k = slot << 1;
      const x = table[k];
      const y = table[k + 1];
      if (y === 0) {
        table[k] = a;
        table[k + 1] = b;
        if (++this.count > this.limit) this.grow();
        return true;
      }
      if (x === a && y === b) return false;
      slot = (slot + 1) & mask;
    }
  }

  private grow(): void {
    const old = this.table;
    // Four times larger up to 65,536 slots, then twice: rehashing visits every old slot, and in
    // a document's first parse it runs before the optimising compiler has the loop, so fewer,
    // earlier growths cost less. At 65,536 slots (512 KiB) the table fills to 0.78, so that a
    // sitemap's 50,000 URLs fit: at half full it took 131,072 slots, 1 MiB a document in flight
    // (4 MiB of a one-thread `usp ls` at its peak). Linear probing at that load costs ~3 probes
    // an insert instead of ~1.3, on a table that stays in cache.
    const m = this.mask;
    const mask = m < 65_535 ? m * 4 + 3 : m * 2 + 1;
    const table = new Int32Array(2 * (mask + 1));
    this.table = table;
    this.mask = mask;
    this.limit = mask < 65_535 ? mask >>> 1 : Math.floor((mask + 1) * 0.78);
    rehash(old, table, mask);
  }
}

function rehash(old: Int32Array, table: Int32Array, mask: number): void {
  for (let k = 0; k < old.length; k += 2) {
    const b = old[k + 1];
    if (b === 0) continue;
    const a = old[k];
    let slot = (a ^ (b >>> 7)) & mask;
    while (table[(slot << 1) + 1] !== 0) slot = (slot + 1) & mask;
    table[slot << 1] = a;
    table[(slot << 1) + 1] = b;
  }
}
