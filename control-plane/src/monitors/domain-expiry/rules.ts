import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';

const DAY_MS = 86_400_000;
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
 * The warning to send now, as its threshold in days: the most urgent threshold the remaining
 * time has crossed, unless it was already sent; null when none is due. Only one per call, and
 * never a less urgent one late: a warning "30 days left" that was missed (the service was off)
 * while only 5 days are left would mislead, so only the 7-day one goes out, and the caller then
 * records every threshold from it upwards as sent (thresholdsCovered).
 */
export function expiryWarningsDue(opts: { expiresAt: Date; now: Date; thresholdsDays: number[]; alreadySent: number[] }): number | null {
  const remainingMs = opts.expiresAt.getTime() - opts.now.getTime();
  const crossed = opts.thresholdsDays.filter((t) => remainingMs <= t * DAY_MS);
  if (crossed.length === 0) return null;
  const mostUrgent = Math.min(...crossed);
  return opts.alreadySent.includes(mostUrgent) ? null : mostUrgent;
}

/** The thresholds a warning at `sent` days stands for: itself and every less urgent one. */
export function thresholdsCovered(sent: number, thresholdsDays: number[]): number[] {
  return [...new Set(thresholdsDays.filter((t) => t >= sent))].sort((a, b) => a - b);
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
