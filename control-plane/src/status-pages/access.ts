import { BlockList, isIP } from 'node:net';

/**
 * Who may read a private status page (ADR 0041), as pure functions: its allow-list of client
 * addresses, and the access a right password grants (a signed value in a cookie).
 */

export const MAX_ALLOWLIST = 100;

/** An address or a CIDR range as written: `203.0.113.7`, `203.0.113.0/24`, `2001:db8::/32`; undefined for anything else. */
export function parseRange(text: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [address = '', prefixText, ...rest] = text.trim().toLowerCase().split('/');
  if (rest.length > 0) return undefined;
  const version = isIP(address);
  if (version === 0) return undefined;
  const bits = version === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  if (prefix > bits) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** The ranges written, as one written form each (lower case, no spaces). */
export const normalRange = (text: string): string => text.trim().toLowerCase();

/** A client address as a range matches it: an IPv4 address mapped into IPv6 (`::ffff:127.0.0.1`) is the IPv4 one. */
function clientAddress(ip: string): { address: string; family: 'ipv4' | 'ipv6' } | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  const address = mapped ? mapped[1]! : ip;
  const version = isIP(address);
  return version === 0 ? undefined : { address, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** Whether a client address is in one of the ranges. */
export function allowlistMatcher(ranges: readonly string[]): (ip: string) => boolean {
  const list = new BlockList();
  for (const r of ranges) {
    const range = parseRange(r);
    if (range) list.addSubnet(range.address, range.prefix, range.family);
  }
  return (ip) => {
    const client = clientAddress(ip);
    return client !== undefined && list.check(client.address, client.family);
  };
}
