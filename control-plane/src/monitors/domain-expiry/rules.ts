import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import type { RdapErrorKind } from './rdap.ts';

const HOUR_MS = 3_600_000;

/**
 * Second-level public suffixes under which people register names (example.co.uk). This is not
 * the full Public Suffix List, on purpose: keeping it current would be a dependency of its own,
 * and a wrong guess costs little. A name under a suffix missing here is looked up one label too
 * short (co.xx instead of example.co.xx), the registry answers 404 or no RDAP service knows it,
 * and the monitor simply shows no domain expiry; no wrong date can come from it.
 */
const SECOND_LEVEL_SUFFIXES = new Set([
  'co.uk',
  'org.uk',
  'ac.uk',
  'gov.uk',
  'com.au',
  'net.au',
  'org.au',
  'co.jp',
  'ne.jp',
  'or.jp',
  'co.nz',
  'com.br',
  'com.cn',
  'com.mx',
  'co.in',
  'co.za',
  'com.tr',
  'com.sg',
  'com.hk',
]);

/**
 * The domain whose registration expiry matters for a monitor's host: the name its owner
 * registered (example.com for api.eu.example.com). Null when there is none to look up: an IP
 * address, a single-label name (localhost), a bare public suffix, or a malformed name.
 * Returned in ASCII (punycode), so one registration is looked up once whatever the spelling.
 */
export function registrableDomain(hostname: string): string | null {
  const bare = hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (isIP(bare)) return null;
  const ascii = domainToASCII(bare.toLowerCase());
  const labels = ascii.split('.');
  if (labels.length < 2 || labels.some((l) => l === '')) return null;
  const keep = SECOND_LEVEL_SUFFIXES.has(labels.slice(-2).join('.')) ? 3 : 2;
  return labels.length < keep ? null : labels.slice(-keep).join('.');
}

/**
 * Names no one registers (RFC 2606, RFC 6761 and their kin): documentation and test names, and
 * names for private networks. No registry has an expiry date for them, so they are not asked.
 */
const RESERVED_DOMAINS = new Set(['example.com', 'example.net', 'example.org', 'home.arpa']);
const RESERVED_TLDS = new Set(['test', 'example', 'invalid', 'localhost', 'local', 'internal', 'arpa']);

/**
 * The registrable domain of a monitor's URL host, '' when there is none to look up (an IP
 * address, localhost, a reserved name, a URL without a host): stored so, '' tells "none" from
 * "not worked out yet".
 */
export function monitorDomain(url: string): string {
  const host = URL.parse(url)?.hostname;
  const domain = host ? registrableDomain(host) : null;
  if (domain === null || RESERVED_DOMAINS.has(domain) || RESERVED_TLDS.has(domain.slice(domain.lastIndexOf('.') + 1))) return '';
  return domain;
}

/**
 * A failed lookup that is the registry's answer rather than its bad moment (no RDAP service for
 * the TLD, a domain it does not know, a name that is not a domain): asking again within the hour
 * would get the same, so it is asked again a day later, like a lookup that succeeded.
 */
export function settledFailure(kind: RdapErrorKind): boolean {
  return kind === 'no-service' || kind === 'not-found' || kind === 'invalid';
}

/**
 * When to look a domain up next. Expiry dates move only on renewal, so once a day is enough;
 * after a failure an hour, so a registry's bad moment is retried soon but at most 24 times a day.
 * Never earlier than now: a lookup overdue (the service was off) is due at once.
 */
export function nextLookupAt(lastLookupAt: Date | null, lastOk: boolean, now: Date): Date {
  if (lastLookupAt === null) return now;
  const due = lastLookupAt.getTime() + (lastOk ? 24 * HOUR_MS : HOUR_MS);
  return new Date(Math.max(due, now.getTime()));
}
