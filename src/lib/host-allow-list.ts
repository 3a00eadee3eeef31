// Which hosts the broker may connect to on its own initiative (remote @contexts, the JWKS): public
// addresses when allowed, and loopback, link-local, private and unspecified ones only when listed.

import { BlockList, isIP } from 'node:net';

/**
 * Addresses never contacted unless listed: unspecified, loopback, link-local, private (RFC 1918,
 * RFC 6598 shared, IPv6 unique local), multicast and reserved; and IPv6 forms that embed an IPv4
 * address (compatible, NAT64), so that none of them reaches a refused IPv4 address. NOTE: BlockList
 * checks IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) against the IPv4 rules itself, and a rule for
 * ::ffff:0:0/96 would match every IPv4 address.
 */
const REFUSED_RANGES: ReadonlyArray<readonly [string, number, 'ipv4' | 'ipv6']> = [
  ['0.0.0.0', 8, 'ipv4'], ['10.0.0.0', 8, 'ipv4'], ['100.64.0.0', 10, 'ipv4'], ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'], ['224.0.0.0', 3, 'ipv4'],
  ['::', 96, 'ipv6'], ['64:ff9b::', 96, 'ipv6'], ['fc00::', 7, 'ipv6'],
  ['fe80::', 10, 'ipv6'], ['ff00::', 8, 'ipv6'],
];

const refused = new BlockList();
for (const [net, prefix, type] of REFUSED_RANGES) refused.addSubnet(net, prefix, type);

/** Whether an address (IPv4 or IPv6 text) is loopback, link-local, private, unspecified or otherwise not public. */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return refused.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export interface HostAllowList {
  /** Whether connecting to `address` (resolved from `hostname`) on `port` is allowed. */
  allows(hostname: string, port: number, address: string): boolean;
  /** Whether nothing at all can be allowed (no entries and public addresses refused): refuse before resolving. */
  readonly isClosed: boolean;
}

interface NameEntry {
  name: string;
  port: number | undefined;
}

interface RangeEntry {
  list: BlockList;
  port: number | undefined;
}

const BRACKETED = /^\[([0-9A-Fa-f:.]+)\](?::(\d{1,5}))?$/;
const BARE_V6 = /^([0-9A-Fa-f:.]+)(?:\/(\d{1,3}))?$/;
const OTHER = /^([^\s:/[\]]+)(?:\/(\d{1,3}))?(?::(\d{1,5}))?$/;

/** `host`, `host:port`, an IP address, `[v6]:port`, or a CIDR range (`192.168.1.0/24`, `fd00::/8`). */
function parseEntry(raw: string): NameEntry | RangeEntry {
  const text = raw.trim();
  const bad = (why = 'not a host, host:port, IP address or address range'): Error => new Error(`${why}: '${raw}'`);
  let host: string | undefined;
  let prefixText: string | undefined;
  let portText: string | undefined;
  if (text.startsWith('[')) [, host, portText] = BRACKETED.exec(text) ?? [];
  else if (isIP(text.split('/')[0] ?? '') === 6) [, host, prefixText] = BARE_V6.exec(text) ?? [];
  else [, host, prefixText, portText] = OTHER.exec(text) ?? [];
  if (host === undefined) throw bad();
  const port = portText === undefined ? undefined : Number(portText);
  if (port !== undefined && (port < 1 || port > 65_535)) throw bad('not a port from 1 to 65535');
  const family = isIP(host);
  if (family === 0) {
    if (prefixText !== undefined || text.startsWith('[')) throw bad('a range needs an IP address');
    return { name: host.toLowerCase(), port };
  }
  const bits = family === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  if (prefix > bits) throw bad('prefix longer than the address');
  const list = new BlockList();
  list.addSubnet(host, prefix, family === 4 ? 'ipv4' : 'ipv6');
  return { list, port };
}

/**
 * An allow-list from entries (host names match the URL's host, addresses and ranges the resolved
 * address; either may name a port). `allowPublic` lets every public address through.
 */
export function createHostAllowList(entries: readonly string[], allowPublic: boolean): HostAllowList {
  const names: NameEntry[] = [];
  const ranges: RangeEntry[] = [];
  for (const raw of entries) {
    if (raw.trim() === '') continue;
    const entry = parseEntry(raw);
    if ('name' in entry) names.push(entry);
    else ranges.push(entry);
  }
  const portMatches = (want: number | undefined, port: number): boolean => want === undefined || want === port;
  return {
    isClosed: !allowPublic && names.length === 0 && ranges.length === 0,
    allows(hostname, port, address) {
      const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
      if (names.some((e) => e.name === host && portMatches(e.port, port))) return true;
      const family = isIP(address);
      if (family === 0) return false;
      const type = family === 4 ? 'ipv4' : 'ipv6';
      if (ranges.some((e) => portMatches(e.port, port) && e.list.check(address, type))) return true;
      return allowPublic && !isNonPublicAddress(address);
    },
  };
}

/** Splits a comma-separated allow-list option into entries; throws an Error naming a bad one. */
export function parseHostAllowList(option: string): string[] {
  const entries = option.split(',').map((e) => e.trim()).filter((e) => e !== '');
  for (const e of entries) parseEntry(e);
  return entries;
}

/** The `host:port` entry of a configured URL (its host alone with `anyPort`); undefined when empty or not a URL. */
export function allowEntryOf(url: string, anyPort = false): string | undefined {
  if (url === '') return undefined;
  try {
    const u = new URL(url);
    if (anyPort) return u.hostname;
    const port = u.port !== '' ? u.port : u.protocol === 'https:' ? '443' : '80';
    return `${u.hostname}:${port}`;
  } catch {
    return undefined;
  }
}

/** The `host:port` entries of configured URLs, skipping empty ones. */
export function allowEntriesOf(urls: readonly string[]): string[] {
  return urls.flatMap((url) => allowEntryOf(url) ?? []);
}
