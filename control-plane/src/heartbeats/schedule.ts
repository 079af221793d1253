import { CronExpressionParser } from 'cron-parser';

const FIELD_NAMES = ['minute', 'hour', 'day of month', 'month', 'day of week'] as const;

// Fixed reference for the "can it ever fire" check, so validation never reads the clock.
const REFERENCE_DATE = new Date('2000-01-01T00:00:00Z');

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Returns a readable reason when `expr` is not a usable 5-field cron expression, else null.
 * Stricter than cron-parser on purpose: it accepts "" and "* * *" (missing fields become `*`)
 * and 6-field expressions with seconds; `H` (hashed) values are refused because without a seed
 * cron-parser picks a random value on every parse, so next_ping_at would jump around.
 */
export function validateCron(expr: string): string | null {
  const fields = expr
    .trim()
    .split(/\s+/)
    .filter((field) => field !== '');
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
 * The first occurrence of `expr` strictly after `after`, in time zone `tz`.
 * `expr` and `tz` must have passed validateCron / validateTimezone.
 */
export function nextCronOccurrence(expr: string, tz: string, after: Date): Date {
  return CronExpressionParser.parse(expr, { currentDate: after, tz }).next().toDate();
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
