/**
 * Where forwards may connect (TRACKGATE_FORWARD_ALLOW, docs/forwards.md). An account admin picks
 * the URL and sees the target's answers in `status.lastError`, so without a limit a forward would
 * probe the services beside trackgate (Redis, a cloud's metadata service, the API itself).
 * The check is on the address a connection goes to, not on how the URL spells it: names are
 * resolved at the API and again at every connect, and the adapters connect to the addresses
 * checked, so DNS rebinding cannot slip by. IPv4 is read as the WHATWG URL parser reads it.
 */
import dns from 'node:dns';
import os from 'node:os';
import type { LookupFunction } from 'node:net';
import { inRange, parseAddress, range, type Address, type Range } from '../addresses.js';

/** The setting that names what forwards may reach although it is refused by default. */
export const FORWARD_ALLOW_SETTING = 'TRACKGATE_FORWARD_ALLOW';

/** What forwards may not reach unless allowed, each with what it is (IANA special-purpose registries, RFC 6890). */
const REFUSED: readonly [Range, string][] = (
  [
    ['0.0.0.0/8', 'an unspecified address ("this host", RFC 1122)'],
    ['127.0.0.0/8', 'a loopback address'],
    ['10.0.0.0/8', 'a private address (RFC 1918)'],
    ['172.16.0.0/12', 'a private address (RFC 1918)'],
    ['192.168.0.0/16', 'a private address (RFC 1918)'],
    ['100.64.0.0/10', 'a shared address of carrier-grade NAT (RFC 6598)'],
    ['169.254.0.0/16', 'a link-local address'],
    ['224.0.0.0/4', 'a multicast address'],
    ['240.0.0.0/4', 'a reserved or broadcast address'],
    ['::/128', 'the unspecified address'],
    ['::1/128', 'the loopback address'],
    ['fc00::/7', 'a unique-local address (RFC 4193)'],
    ['fe80::/10', 'a link-local address'],
    ['fec0::/10', 'a site-local address'],
    ['ff00::/8', 'a multicast address'],
  ] as const
).map(([cidr, kind]) => [range(cidr), kind]);

/** The port a URL connects to: its own, or its scheme's. */
export function targetPort(url: URL): number {
  if (url.port) return Number(url.port);
  return (
    { 'http:': 80, 'https:': 443, 'mqtt:': 1883, 'mqtts:': 8883, 'amqp:': 5672, 'amqps:': 5671 }[url.protocol] ?? 0
  );
}

/** A connection to a place forwards may not reach; its message says why and what allows it. */
export class ForwardTargetRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ForwardTargetRefused';
  }
}

export interface ForwardTargets {
  /** Why `url`'s server is refused as written (an address, or this service's own listener), null for an address allowed or a host name (checked once resolved). */
  refusedAsWritten(url: URL): string | null;
  /** The addresses `host` stands for, every one checked for `port`: rejects with ForwardTargetRefused, or with the resolver's error. */
  resolve(host: string, port: number): Promise<{ address: string; family: 4 | 6 }[]>;
  /** For the API: why `url` is refused, resolving a host name within the timeout; a name that does not resolve now passes (its delivery says why it fails). */
  problem(url: URL): Promise<string | null>;
  /** A socket `lookup` that gives only addresses `resolve` checked for `port`. */
  lookup(port: number): LookupFunction;
  /** The ports this service listens on, once they are bound (port 0 in tests): never reached on any address of this machine. */
  setOwnPorts(ports: Iterable<number>): void;
}

export interface ForwardTargetSettings {
  /** TRACKGATE_FORWARD_ALLOW: host names, addresses and CIDR ranges (config/config.ts checks and normalizes them) */
  allow: readonly string[];
  /** how long the API waits for a host name to resolve */
  timeoutMs: number;
}

const allowHint = `forwards reach it only when ${FORWARD_ALLOW_SETTING} names it (or a range holding it)`;

/** TRACKGATE_FORWARD_ALLOW's entries: host names as compared, and ranges (an address is a range of one). */
function parseAllow(allow: readonly string[]): { allowedNames: Set<string>; allowedRanges: Range[] } {
  const allowedNames = new Set<string>();
  const allowedRanges: Range[] = [];
  for (const entry of allow) {
    if (entry.includes('/')) allowedRanges.push(range(entry));
    else {
      const a = parseAddress(entry);
      if (a) allowedRanges.push({ first: a.bits, last: a.bits });
      else allowedNames.add(normalName(entry));
    }
  }
  return { allowedNames, allowedRanges };
}

/** This machine: its loopback and unspecified addresses, and those of its interfaces now (they change: DHCP, VPNs). */
function isThisMachine(a: Address): boolean {
  if (REFUSED.some(([r, kind]) => inRange(a, r) && /loopback|unspecified/.test(kind))) return true;
  return Object.values(os.networkInterfaces()).some((list) =>
    list?.some((i) => parseAddress(i.address)?.bits === a.bits),
  );
}

export function createForwardTargets(settings: ForwardTargetSettings): ForwardTargets {
  const { allowedNames, allowedRanges } = parseAllow(settings.allow);
  let ownPorts = new Set<number>();

  /** Why `a` is refused for `port`; `named`: the host name that led to it, when one did. */
  function refusal(a: Address, port: number, named?: string): string | null {
    const what = named ? `${named} resolves to ${a.text}, which` : a.text;
    if (ownPorts.has(port) && isThisMachine(a))
      return `${what} is an address of this machine and port ${port} is this service's own listener, which forwards never reach, whatever ${FORWARD_ALLOW_SETTING} names`;
    if (named && allowedNames.has(normalName(named))) return null;
    if (allowedRanges.some((r) => inRange(a, r))) return null;
    const kind = REFUSED.find(([r]) => inRange(a, r))?.[1];
    return kind ? `${what} is ${kind}: ${allowHint}` : null;
  }

  function refusedAsWritten(url: URL): string | null {
    const a = parseAddress(url.hostname);
    return a ? refusal(a, targetPort(url)) : null;
  }

  async function resolve(host: string, port: number): Promise<{ address: string; family: 4 | 6 }[]> {
    const literal = parseAddress(host);
    const found = literal
      ? [literal]
      : (await dns.promises.lookup(host, { all: true, verbatim: true })).map((r) => parseAddress(r.address));
    const addresses: Address[] = [];
    for (const a of found) {
      // what the resolver gives is an address; anything else is not connected to
      if (!a) throw new ForwardTargetRefused(`${host} resolves to something that is not an address`);
      const why = refusal(a, port, literal ? undefined : host);
      if (why) throw new ForwardTargetRefused(why);
      addresses.push(a);
    }
    if (!addresses.length) throw new ForwardTargetRefused(`${host} resolves to no address`);
    return addresses.map((a) => ({ address: a.text, family: a.family }));
  }

  async function problem(url: URL): Promise<string | null> {
    const written = refusedAsWritten(url);
    if (written || parseAddress(url.hostname)) return written;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((done) => (timer = setTimeout(() => done(null), settings.timeoutMs)));
    const checked = resolve(url.hostname, targetPort(url)).then(
      () => null,
      (e: unknown) => (e instanceof ForwardTargetRefused ? e.message : null),
    );
    return Promise.race([checked, late]).finally(() => clearTimeout(timer));
  }

  function lookup(port: number): LookupFunction {
    return (hostname, options, callback) => {
      resolve(hostname, port).then(
        (list) => (options.all ? callback(null, list) : callback(null, list[0].address, list[0].family)),
        (e: NodeJS.ErrnoException) => callback(e, options.all ? [] : ''),
      );
    };
  }

  return {
    refusedAsWritten,
    resolve,
    problem,
    lookup,
    setOwnPorts(ports) {
      ownPorts = new Set([...ports].filter((p) => p > 0));
    },
  };
}

/** A host name as compared: lower case, without the root's dot. */
function normalName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}
