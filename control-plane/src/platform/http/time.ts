/**
 * Timestamps leave the API in UTC with six fractional digits and a Z:
 * `2026-11-21T01:25:30.123456Z`. Postgres sends `2026-11-21 01:25:30.1234+00` (session time
 * zone UTC, trailing zeros of the fraction dropped), so the microseconds survive untouched.
 */
export function formatTimestamp(pg: string): string;
export function formatTimestamp(pg: string | null): string | null;
export function formatTimestamp(pg: string | null): string | null {
  if (pg === null) return null;
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?(?:\+00(?::?00)?|Z)$/.exec(pg);
  if (!m) {
    const d = new Date(pg);
    if (Number.isNaN(d.getTime())) throw new Error(`not a timestamp: ${pg}`);
    return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
  }
  return `${m[1]}T${m[2]}.${(m[3] ?? '').padEnd(6, '0')}Z`;
}

/** "just now", "12 seconds ago", "1 minute ago", "3 hours ago", "2 days ago"; "never" for null. */
export function relativeTime(at: Date | null, now: Date): string {
  if (!at) return 'never';
  const s = Math.max(0, Math.floor((now.getTime() - at.getTime()) / 1000));
  if (s < 1) return 'just now';
  const units: [number, string][] = [
    [86_400 * 365, 'year'],
    [86_400 * 30, 'month'],
    [86_400 * 7, 'week'],
    [86_400, 'day'],
    [3_600, 'hour'],
    [60, 'minute'],
    [1, 'second'],
  ];
  for (const [size, name] of units) {
    if (s >= size) {
      const n = Math.floor(s / size);
      return `${n} ${name}${n === 1 ? '' : 's'} ago`;
    }
  }
  return 'just now';
}
