import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { BlockedAddressError } from './errors.js';

/** Why an address is not public. `null` from `classifyAddress` means public. */
export type AddressCategory =
  | 'loopback'
  | 'private'
  | 'shared (CGNAT)'
  | 'link-local'
  | 'cloud metadata'
  | 'unique-local'
  | 'site-local'
  | 'unspecified'
  | 'multicast'
  | 'reserved';

function parseIPv4(ip: string): number | null {
  const parts = ip.split('.');
  if (parts.length !== 4) return null;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return null;
    const v = Number(p);
    if (v > 255) return null;
    n = n * 256 + v;
  }
  return n;
}

/** Eight 16-bit groups, or null when `ip` is not an IPv6 literal. */
function parseIPv6(input: string): number[] | null {
  let ip = input;
  const zone = ip.indexOf('%');
  if (zone >= 0) ip = ip.slice(0, zone);
  if (ip.startsWith('[') && ip.endsWith(']')) ip = ip.slice(1, -1);
  if (isIP(ip) !== 6) return null;
  let tail: number[] = [];
  const lastColon = ip.lastIndexOf(':');
  const maybeV4 = ip.slice(lastColon + 1);
  if (maybeV4.includes('.')) {
    const v4 = parseIPv4(maybeV4);
    if (v4 === null) return null;
    tail = [v4 >>> 16, v4 & 0xffff];
    ip = `${ip.slice(0, lastColon + 1)}0:0`;
  }
  const [headPart, tailPart] = ip.includes('::') ? ip.split('::') : [ip, undefined];
  const toGroups = (s: string | undefined): number[] =>
    s === undefined || s === '' ? [] : s.split(':').map((g) => Number.parseInt(g, 16));
  const head = toGroups(headPart);
  const rest = toGroups(tailPart);
  let groups: number[];
  if (tailPart === undefined) groups = head;
  else groups = [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest];
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) return null;
  if (tail.length) {
    groups[6] = tail[0];
    groups[7] = tail[1];
  }
  return groups;
}

function classifyIPv4(n: number): AddressCategory | null {
  const a = n >>> 24;
  const b = (n >>> 16) & 0xff;
  if (a === 0) return 'unspecified';
  if (a === 10) return 'private';
  if (a === 127) return 'loopback';
  if (a === 100 && b >= 64 && b <= 127) return 'shared (CGNAT)';
  if (a === 169 && b === 254) return n === 0xa9fea9fe ? 'cloud metadata' : 'link-local';
  if (a === 172 && b >= 16 && b <= 31) return 'private';
  if (a === 192 && b === 168) return 'private';
  if (a >= 224 && a <= 239) return 'multicast';
  if (a >= 240) return 'reserved';
  return null;
}

/**
 * The category of a non-public IP address, or `null` for a public one (or for something that is
 * not an IP literal). IPv6 forms that embed an IPv4 address (mapped `::ffff:a.b.c.d`,
 * compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by that address,
 * because they reach it.
 */
export function classifyAddress(ip: string): AddressCategory | null {
  const v4 = parseIPv4(ip);
  if (v4 !== null) return classifyIPv4(v4);
  const g = parseIPv6(ip);
  if (g === null) return null;
  const embedded = (hi: number, lo: number) => classifyIPv4(((hi << 16) >>> 0) + lo);
  const zeroTo = (end: number) => g.slice(0, end).every((x) => x === 0);
  if (zeroTo(8)) return 'unspecified';
  if (zeroTo(7) && g[7] === 1) return 'loopback';
  if (zeroTo(5) && g[5] === 0xffff) return embedded(g[6], g[7]);
  if (zeroTo(6)) return embedded(g[6], g[7]);
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return embedded(g[6], g[7]);
  if (g[0] === 0x2002) return embedded(g[1], g[2]);
  if ((g[0] & 0xfe00) === 0xfc00) return 'unique-local';
  if ((g[0] & 0xffc0) === 0xfe80) return 'link-local';
  if ((g[0] & 0xffc0) === 0xfec0) return 'site-local';
  if ((g[0] & 0xff00) === 0xff00) return 'multicast';
  return null;
}

/** True for loopback, private, CGNAT, link-local, unique-local, unspecified, multicast and reserved addresses. */
export function isPrivateAddress(ip: string): boolean {
  return classifyAddress(ip) !== null;
}

function lookupAll(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
  );
}

/**
 * Whether a URL's host is (or resolves to) a non-public address. For deciding, before a walk,
 * that a homepage on the local network was asked for explicitly and private networks should be
 * allowed. A name that does not resolve counts as public (the request itself will then fail).
 */
export async function hostIsPrivate(url: string): Promise<boolean> {
  let hostname: string;
  try {
    hostname = new URL(url).hostname;
  } catch {
    return false;
  }
  const literal = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (isIP(literal)) return isPrivateAddress(literal);
  try {
    const addresses = await lookupAll(literal);
    return addresses.some((a) => isPrivateAddress(a.address));
  } catch {
    return false;
  }
}

/** Throws `BlockedAddressError` when `hostname` is a non-public IP literal. */
export function assertPublicLiteral(hostname: string): void {
  const literal = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  const category = classifyAddress(literal);
  if (category !== null) throw new BlockedAddressError(hostname, literal, category);
}

/**
 * A `lookup` for `net.connect` that drops non-public addresses from the answer and fails
 * with `BlockedAddressError` when none is left. The check runs on the very addresses the socket
 * connects to, so a name that resolves inward (or rebinds between two lookups) is caught.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) {
      callback(err, '', 0);
      return;
    }
    const allowed = addresses.filter((a) => classifyAddress(a.address) === null);
    if (allowed.length === 0) {
      const first = addresses[0];
      const category = first ? (classifyAddress(first.address) ?? 'reserved') : 'reserved';
      callback(new BlockedAddressError(hostname, first?.address ?? '', category), '', 0);
      return;
    }
    if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
    else callback(null, allowed[0].address, allowed[0].family);
  });
};

/** Resolves a host and throws `BlockedAddressError` when any address is not public (used through a proxy). */
export async function assertPublicHost(hostname: string): Promise<void> {
  assertPublicLiteral(hostname);
  const literal = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (isIP(literal)) return;
  let addresses: LookupAddress[];
  try {
    addresses = await lookupAll(literal);
  } catch {
    // Resolution is the proxy's business; it may see names we cannot.
    return;
  }
  for (const a of addresses) {
    const category = classifyAddress(a.address);
    if (category !== null) throw new BlockedAddressError(hostname, a.address, category);
  }
}
