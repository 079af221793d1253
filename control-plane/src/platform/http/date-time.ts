import { z } from 'zod';

const parts = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * The same instant in UTC with a Z, keeping every fractional digit: `2030-01-01T00:30:00.123456+23:59`
 * becomes `2029-12-31T00:31:00.123456Z`. ISO 8601 allows offsets up to ±23:59 but Postgres refuses
 * any beyond ±15:59, so nothing with an offset may reach SQL. Text that is not such a date-time
 * is returned as it is (the format check refuses it).
 */
export function toUtc(value: string): string {
  const m = parts.exec(value);
  if (!m) return value;
  const whole = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(whole)) return value;
  const iso = new Date(whole).toISOString();
  return `${iso.slice(0, -5)}${m[2] ?? ''}Z`;
}

/**
 * An ISO 8601 date-time with Z or an offset, inside [earliest, latest], handed on in UTC. Out of
 * range (year 0, a UTC instant in year 10000 after its offset) is a 422 naming the field, not a
 * fault of the database.
 */
export function utcDateTime(field: string, range: { earliest: Date; latest: Date }) {
  const [from, to] = [range.earliest, range.latest].map((d) => d.toISOString().replace(/\.000Z$/, 'Z'));
  return z.iso
    .datetime({ offset: true, abort: true })
    .superRefine((value, ctx) => {
      const at = Date.parse(value);
      if (at < range.earliest.getTime() || at > range.latest.getTime()) {
        ctx.addIssue({ code: 'custom', message: `The ${field} field must be between ${from} and ${to}.` });
      }
    })
    .overwrite(toUtc);
}
