import { isIPv4, isIPv6 } from 'node:net';

/**
 * The address policy of BLOCK_PRIVATE_TARGETS, shared by everything that connects where a tenant
 * says: probe agents checking monitors, the notifier delivering to webhooks and other integrations.
 */

/**
 * Addresses we must never connect to when private targets are blocked: anything that is not
 * globally routable unicast (loopback, private, link-local, CGNAT, cloud metadata, multicast,
 * reserved, documentation ranges), including IPv6 forms that embed such an IPv4 address.
 * Unparseable input counts as blocked (fail closed).
 */
export function isBlockedAddress(ip: string): boolean {
  const zone = ip.indexOf('%');
  const bare = zone === -1 ? ip : ip.slice(0, zone);
  if (isIPv4(bare)) return isBlockedV4(parseV4(bare));
  if (isIPv6(bare)) return isBlockedV6(parseV6(bare));
  return true;
}

type Cidr4 = readonly [base: number, prefix: number];

const BLOCKED_V4: readonly Cidr4[] = [
  [v4(0, 0, 0, 0), 8], // "this network", includes the unspecified address
  [v4(10, 0, 0, 0), 8],
  [v4(100, 64, 0, 0), 10], // carrier-grade NAT
  [v4(127, 0, 0, 0), 8],
  [v4(169, 254, 0, 0), 16], // link-local, includes 169.254.169.254 metadata
  [v4(172, 16, 0, 0), 12],
  [v4(192, 0, 0, 0), 24], // IETF protocol assignments (some clouds put metadata here)
  [v4(192, 0, 2, 0), 24], // documentation
  [v4(192, 88, 99, 0), 24], // deprecated 6to4 relay anycast
  [v4(192, 168, 0, 0), 16],
  [v4(198, 18, 0, 0), 15], // benchmarking, used as internal space in the wild
  [v4(198, 51, 100, 0), 24], // documentation
  [v4(203, 0, 113, 0), 24], // documentation
  [v4(224, 0, 0, 0), 4], // multicast
  [v4(240, 0, 0, 0), 4], // reserved, includes broadcast
];

function v4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

function parseV4(s: string): number {
  const [a = 0, b = 0, c = 0, d = 0] = s.split('.').map(Number);
  return v4(a, b, c, d);
}

function inCidr4(addr: number, [base, prefix]: Cidr4): boolean {
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return (addr & mask) >>> 0 === base;
}

function isBlockedV4(addr: number): boolean {
  return BLOCKED_V4.some((cidr) => inCidr4(addr, cidr));
}

/** Eight 16-bit groups; the caller has validated the syntax with isIPv6. */
function parseV6(s: string): number[] {
  const groupsOf = (part: string): number[] =>
    part === ''
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [parseInt(g, 16)];
          const n = parseV4(g);
          return [n >>> 16, n & 0xffff];
        });
  const [head = '', tail] = s.split('::');
  const left = groupsOf(head);
  if (tail === undefined) return left;
  const right = groupsOf(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function embeddedV4(g: number[], at: number): number {
  return (((g[at] ?? 0) << 16) | (g[at + 1] ?? 0)) >>> 0;
}

function isBlockedV6(g: number[]): boolean {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0] = g;
  const upperZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  // ::ffff:a.b.c.d reaches the IPv4 address itself
  if (upperZero && g5 === 0xffff) return isBlockedV4(embeddedV4(g, 6));
  // NAT64 well-known prefix: legitimate on IPv6-only hosts, so judge the IPv4 address inside
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return isBlockedV4(embeddedV4(g, 6));
  }
  // Only 2000::/3 is global unicast; everything else is loopback, unspecified, ULA (fc00::/7,
  // includes the fd00:ec2::254 metadata address), link-local, site-local, multicast or reserved.
  if ((g0 & 0xe000) !== 0x2000) return true;
  if (g0 === 0x2001 && g1 === 0x0db8) return true; // documentation
  if (g0 === 0x2002) return isBlockedV4(embeddedV4(g, 1)); // 6to4 carries an IPv4 address
  return false;
}
