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
 * Whether the expression counts elapsed time rather than naming times of day: its minute or hour
 * field starts with `*` (`0 * * * *`, `* 3 * * *`, a step such as `*` + `/15`). Vixie cron's
 * rule, which cronie keeps: such a job follows the real clock through daylight-saving changes,
 * a job at a time of day runs once a day whatever the clock does.
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
 * The instants at which the zone's clock shows `wall` (the local date and time as if it were
 * UTC), earliest first: one, two when the clock goes back over it, none when it jumps over it.
 * `jump` is then the instant of that jump.
 */
function instantsOf(tz: string, wall: number): { passes: number[]; jump: number } {
  // The zone's offsets a day either side: no zone changes its offset twice within two days.
  const before = offsetAt(tz, wall - DAY);
  const after = offsetAt(tz, wall + DAY);
  if (before === after) return { passes: [wall - before], jump: NaN };
  const passes = [wall - before, wall - after].filter((t) => t + offsetAt(tz, t) === wall).sort((x, y) => x - y);
  return { passes, jump: passes.length > 0 ? NaN : transitionBetween(tz, wall - after, wall - before) };
}

/**
 * Jumps over the times an expression names, with nothing fired between them, before it counts
 * as never firing in the zone, as `* 2 * 3 0L` (02:00-02:59 on the last Sunday of March) does in
 * Europe/Berlin. Dates and weekdays repeat within 28 years between century years, and a zone
 * jumps forward once or twice a year.
 */
const MAX_JUMPS = 60;

/**
 * The first occurrence of `expr` strictly after `after`, in time zone `tz`; null when every time
 * it names is one the clock skips. `expr` and `tz` must have passed validateCron /
 * validateTimezone.
 *
 * Through daylight-saving changes, an expression that counts elapsed time fires at every instant
 * the clock shows a time it names: not at all for a time the clock jumps over, twice for one it
 * shows twice. A time of day fires once: on its first pass when the clock shows it twice, at the
 * first instant after the jump when the clock skips it (several skipped times make one firing).
 *
 * cron-parser only matches wall-clock times (read in UTC, where no clock jumps); mapping them to
 * instants is done here, because cron-parser's own time-zone mode moves a skipped time by the
 * length of the gap (02:30 to 03:30), drops it when the gap is 30 minutes (Lord Howe), fires a
 * repeated midnight on its second pass (Havana) and answers a second pass when asked from inside
 * a repeated hour.
 */
export function nextCronOccurrence(expr: string, tz: string, after: Date): Date | null {
  const fields = cronFields(expr);
  // The default zone, where the clock never changes: its wall-clock times are the instants.
  if (tz === 'UTC') return CronExpressionParser.parse(fields, { currentDate: after, tz }).next().toDate();
  const elapsed = countsElapsedTime(fields);
  const from = after.getTime();
  const wallsAfter = (wall: number) => CronExpressionParser.parse(fields, { currentDate: new Date(wall), tz: 'UTC' });
  // An instant after `from` reads on the clock after `from` plus the lower of the offsets around
  // it: a repeated hour's second pass shows an earlier time than its first pass did.
  let walls = wallsAfter(from + Math.min(offsetAt(tz, from), offsetAt(tz, from + DAY)));
  let best = Infinity;
  for (let jumps = 0; ;) {
    const { passes, jump } = instantsOf(tz, walls.next().getTime());
    if (passes.length === 0 && elapsed) {
      if (++jumps > MAX_JUMPS) return best < Infinity ? new Date(best) : null;
      // Go on from the time the clock shows right after the jump.
      walls = wallsAfter(jump + offsetAt(tz, jump) - 1);
      continue;
    }
    const fires = passes.length === 0 ? [jump] : elapsed ? passes : passes.slice(0, 1);
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
