import { CronExpressionParser } from 'cron-parser';
import { offsetAt } from '../platform/time-zone.ts';

const FIELD_NAMES = ['minute', 'hour', 'day of month', 'month', 'day of week'] as const;

/** Vixie cron's shorthands that name a time; `@reboot` names none and is refused. */
const SHORTHANDS = new Map([
  ['@yearly', '0 0 1 1 *'],
  ['@annually', '0 0 1 1 *'],
  ['@monthly', '0 0 1 * *'],
  ['@weekly', '0 0 * * 0'],
  ['@daily', '0 0 * * *'],
  ['@midnight', '0 0 * * *'],
  ['@hourly', '0 * * * *'],
]);
const SHORTHAND_LIST = '@hourly, @daily, @midnight, @weekly, @monthly, @yearly or @annually';

// Fixed reference for the "can it ever fire" check, so validation never reads the clock.
const REFERENCE_DATE = new Date('2000-01-01T00:00:00Z');
const DAY = 86_400_000;

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The five fields a valid expression stands for: a shorthand (`@daily`, in any case) spelled
 * out, the whitespace between fields made single spaces. What is stored stays the text sent.
 */
export function cronFields(expr: string): string {
  const trimmed = expr.trim();
  return SHORTHANDS.get(trimmed.toLowerCase()) ?? trimmed.split(/\s+/).join(' ');
}

function validateShorthand(expr: string): string | null {
  const [word = '', ...rest] = expr.split(/\s+/);
  const known = SHORTHANDS.has(word.toLowerCase());
  if (known && rest.length > 0) return `"${word}" stands alone: no fields may follow it`;
  if (known) return null;
  if (word.toLowerCase() === '@reboot') return `"${word}" names no time: it runs when a machine starts, not on a schedule`;
  return `unknown shorthand "${word}": use ${SHORTHAND_LIST}, or 5 fields`;
}

/**
 * Returns a readable reason when `expr` is not a usable 5-field cron expression or shorthand
 * (@hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually, in any case), else null.
 * Stricter than cron-parser on purpose: it accepts "" and "* * *" (missing fields become `*`)
 * and 6-field expressions with seconds; `H` (hashed) values are refused because without a seed
 * cron-parser picks a random value on every parse, so next_ping_at would jump around.
 */
export function validateCron(expr: string): string | null {
  const trimmed = expr.trim();
  if (trimmed.startsWith('@')) return validateShorthand(trimmed);
  const fields = trimmed.split(/\s+/).filter((field) => field !== '');
  if (fields.length !== FIELD_NAMES.length) {
    return `expected 5 fields (minute hour day-of-month month day-of-week), got ${fields.length}`;
  }
  for (const [index, field] of fields.entries()) {
    const name = FIELD_NAMES[index];
    if (field.includes('H')) return `${name} field "${field}": hashed values (H) are not supported`;
    // cron-parser's messages do not say which field is wrong: parse each field alone to find it.
    const probe = FIELD_NAMES.map((_, i) => (i === index ? field : '*')).join(' ');
    try {
      CronExpressionParser.parse(probe, { currentDate: REFERENCE_DATE, tz: 'UTC' });
    } catch (err) {
      return `${name} field "${field}": ${messageOf(err)}`;
    }
  }
  try {
    // Catches combinations that can never match (e.g. "0 0 31 2 *").
    CronExpressionParser.parse(fields.join(' '), { currentDate: REFERENCE_DATE, tz: 'UTC' }).next();
  } catch (err) {
    return `the schedule never matches a date: ${messageOf(err)}`;
  }
  return null;
}

/** True when `tz` is a time zone this runtime knows (cron-parser only fails on it at next()). */
export function validateTimezone(tz: string): boolean {
  // An IANA name (Europe/Berlin, UTC). Since Node 22 the runtime's ICU also takes a bare UTC
  // offset (+02:00) as a time zone: that has no daylight-saving rules, so it is refused.
  if (!/^[A-Za-z]/.test(tz)) return false;
  try {
    new Intl.DateTimeFormat(undefined, { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether the expression counts elapsed time rather than naming times of day: its minute or
 * hour field starts with `*` (`0 * * * *`, `* 3 * * *`, a step such as `*` + `/15`). Such a job runs on both
 * passes of an hour the clock repeats; one at a time of day runs once. Vixie cron's rule, which
 * cronie keeps, so the pings expected are those a crontab sends.
 */
function countsElapsedTime(fields: string): boolean {
  const [minute = '', hour = ''] = fields.split(' ');
  return minute.startsWith('*') || hour.startsWith('*');
}

/** The first instant with the zone's later offset, between `from` (earlier offset) and `to`, to the second. */
function transitionBetween(tz: string, from: number, to: number): number {
  const early = offsetAt(tz, from);
  let lo = from;
  let hi = to;
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (offsetAt(tz, mid) === early) lo = mid;
    else hi = mid;
  }
  return hi;
}

/**
 * The instants at which a matched wall-clock time (`wall`: the local date and time as if it were
 * UTC) fires, earliest first. An ordinary time has one. A time the clock passes twice (autumn)
 * fires on its first pass, and on the second too when the expression counts elapsed time. A time
 * the clock skips (spring) fires at the first instant after the jump: every skipped time does,
 * so they make one firing there.
 */
function firings(tz: string, wall: number, elapsed: boolean): number[] {
  // The zone's offsets a day either side: no zone changes its offset twice within two days.
  const before = offsetAt(tz, wall - DAY);
  const after = offsetAt(tz, wall + DAY);
  if (before === after) return [wall - before];
  const passes = [wall - before, wall - after].filter((t) => t + offsetAt(tz, t) === wall).sort((x, y) => x - y);
  if (passes.length === 0) return [transitionBetween(tz, wall - after, wall - before)];
  return elapsed ? passes : passes.slice(0, 1);
}

/**
 * The first occurrence of `expr` strictly after `after`, in time zone `tz`, with the
 * daylight-saving rules of `firings`. `expr` and `tz` must have passed validateCron /
 * validateTimezone.
 *
 * cron-parser only matches wall-clock times (read in UTC, where no clock jumps); mapping them to
 * instants is done here, because cron-parser's own time-zone mode moves a skipped time by the
 * length of the gap (02:30 to 03:30), drops it when the gap is 30 minutes (Lord Howe), fires a
 * repeated midnight on its second pass (Havana) and answers a second pass when asked from inside
 * a repeated hour.
 */
export function nextCronOccurrence(expr: string, tz: string, after: Date): Date {
  const fields = cronFields(expr);
  const elapsed = countsElapsedTime(fields);
  const from = after.getTime();
  // An instant after `from` reads on the clock after `from` plus the lower of the offsets around
  // it: a repeated hour's second pass shows an earlier time than its first pass did.
  const wallFrom = from + Math.min(offsetAt(tz, from), offsetAt(tz, from + DAY));
  const walls = CronExpressionParser.parse(fields, { currentDate: new Date(wallFrom), tz: 'UTC' });
  let best = Infinity;
  for (;;) {
    const fires = firings(tz, walls.next().getTime(), elapsed);
    for (const t of fires) if (t > from && t < best) best = t;
    // The first firing of a wall-clock time never comes before that of an earlier one, so once
    // one is past `from` no later wall-clock time can fire sooner.
    if (fires[0]! > from) return new Date(best);
  }
}

export interface Schedule {
  cron_schedule?: string | null;
  timezone?: string | null;
  period?: number | null;
}

/** When the next ping is due after `after`: cron wins over period; null when it has neither. */
export function nextExpectedPing(schedule: Schedule, after: Date): Date | null {
  if (schedule.cron_schedule) {
    return nextCronOccurrence(schedule.cron_schedule, schedule.timezone || 'UTC', after);
  }
  if (schedule.period != null) return new Date(after.getTime() + schedule.period * 1000);
  return null;
}
