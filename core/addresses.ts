/**
 * IP addresses and CIDR ranges as 128-bit numbers, IPv4 in the IPv4-mapped block, so that
 * `10.0.0.5` and `::ffff:10.0.0.5` (what a socket bound to `::` reports) are one address. Forwards'
 * targets (forward/forward.targets.ts) and the API's trusted proxies read them.
 */

/** An address as 128 bits; IPv4 as IPv4-mapped IPv6 (::ffff:a.b.c.d), so that both spellings are one. */
export interface Address {
  bits: bigint;
  /** as it is connected to: dotted IPv4, or IPv6 without brackets */
  text: string;
  family: 4 | 6;
}

export interface Range {
  first: bigint;
  last: bigint;
}

const MAPPED = 0xffffn << 32n;

/** The range a CIDR (`10.0.0.0/8`, `fd00::/8`) or a single address spells; throws for anything else. */
export function range(cidr: string): Range {
  const [a, given] = cidr.split('/');
  const address = parseAddress(a);
  const p = given ?? (a.includes(':') ? '128' : '32');
  if (!address || !/^\d{1,3}$/.test(p)) throw new Error(`"${cidr}" is not a CIDR range`);
  // an IPv4 range in the IPv4-mapped block; a range written in IPv6 counts its prefix in 128 bits
  const prefix = Number(p) + (a.includes(':') ? 0 : 96);
  if (prefix > 128) throw new Error(`"${cidr}": the prefix is longer than the address`);
  const host = (1n << BigInt(128 - prefix)) - 1n;
  return { first: address.bits & ~host, last: (address.bits & ~host) | host };
}

/** The 16-bit groups of an IPv6 address as the WHATWG URL parser writes it (lower case, hex only, `::` at most once). */
function ipv6Bits(text: string): bigint | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = halves.map((h) => (h === '' ? [] : h.split(':')));
  const missing = 8 - groups.reduce((n, g) => n + g.length, 0);
  const all = halves.length === 2 ? [...groups[0], ...Array<string>(missing).fill('0'), ...groups[1]] : groups[0];
  if (all.length !== 8 || !all.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return undefined;
  return all.reduce((bits, g) => (bits << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/**
 * The address `host` spells (with or without brackets, in any spelling an IPv4 parser takes), or
 * undefined for a host name. The WHATWG URL parser does the reading, for both families.
 */
export function parseAddress(host: string): Address | undefined {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (!bare || /[/?#@\\\s%]/.test(bare)) return undefined;
  let hostname: string;
  try {
    hostname = new URL(bare.includes(':') ? `http://[${bare}]/` : `http://${bare}/`).hostname;
  } catch {
    return undefined;
  }
  if (hostname.startsWith('[')) {
    const bits = ipv6Bits(hostname.slice(1, -1));
    if (bits === undefined) return undefined;
    if (bits >> 32n === 0xffffn) return fromIpv4(Number(bits & 0xffffffffn));
    return { bits, text: hostname.slice(1, -1), family: 6 };
  }
  const quad = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(hostname);
  if (!quad) return undefined;
  return fromIpv4(quad.slice(1).reduce((n, x) => n * 256 + Number(x), 0));
}

function fromIpv4(n: number): Address {
  return {
    bits: MAPPED | BigInt(n),
    text: [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.'),
    family: 4,
  };
}

export const inRange = (a: Address, r: Range) => a.bits >= r.first && a.bits <= r.last;
