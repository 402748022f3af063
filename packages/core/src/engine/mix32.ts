/**
 * MurmurHash3's 32-bit finaliser: every input bit moves every output bit with probability near ½.
 * The format and batch packages end their hashes of URLs and rows with it, so it lives once here.
 */
export function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}
