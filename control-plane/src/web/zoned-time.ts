import { offsetAt } from '../platform/time-zone.ts';

const DAY = 86_400_000;
const localTime = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/;

/**
 * An instant as the wall-clock time of a time zone, the way a datetime-local input holds it:
 * `2030-01-31T22:00` (with seconds when they are not zero).
 */
export function wallTime(ms: number, tz: string): string {
  const wall = new Date(Math.floor(ms / 1000) * 1000 + offsetAt(tz, ms));
  return wall.toISOString().slice(0, wall.getUTCSeconds() ? 19 : 16);
}

/**
 * The instant a wall-clock time (`2030-01-31T22:00`) names in a time zone; null when the text is
 * not such a time. A time the zone skips in spring moves forward by the gap, and one it repeats
 * in autumn is its first pass: the way recurring windows read their cron expression (ADR 0029).
 * An unknown zone throws a RangeError.
 */
export function fromWallTime(text: string, tz: string): number | null {
  const m = localTime.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map((x) => Number(x ?? 0)) as [number, number, number, number, number, number];
  const wall = Date.UTC(y, mo - 1, d, h, mi, s);
  const check = new Date(wall);
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) {
    return null;
  }
  // The zone's offsets a day either side: a wall-clock time has one instant with one of them,
  // two in a repeated hour, none in a skipped one.
  const before = offsetAt(tz, wall - DAY);
  const after = offsetAt(tz, wall + DAY);
  const passes = [wall - before, wall - after].filter((t) => t + offsetAt(tz, t) === wall);
  return passes.length > 0 ? Math.min(...passes) : wall - before;
}
