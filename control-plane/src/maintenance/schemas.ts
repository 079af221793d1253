import { z } from 'zod';
import { validateCron } from '../heartbeats/schedule.ts';
import { timezoneField } from '../heartbeats/schemas.ts';
import { utcDateTime } from '../platform/http/date-time.ts';

/** Longest occurrence of a recurring window, and of a one-off window: 7 days and 31 days. */
export const MAX_DURATION_SECONDS = 7 * 86_400;
export const MAX_ONE_OFF_SECONDS = 31 * 86_400;
/** How far ahead status pages announce a window. */
export const ANNOUNCE_DAYS = 7;

const noNul = (v: string) => !v.includes('\u0000');

const name = z.string().trim().min(1).max(255).refine(noNul, 'The name field must not contain NUL characters.');
const description = z
  .string()
  .max(2000)
  .refine(noNul, 'The description field must not contain NUL characters.')
  .describe('Shown on status pages while the window is ahead or runs.');
const instant = (field: string) =>
  utcDateTime(field, { earliest: new Date(Date.UTC(2000, 0, 1)), latest: new Date(Date.UTC(9999, 11, 31, 23, 59, 59)) });
const cron = z
  .string()
  .trim()
  .max(255, { abort: true })
  .superRefine((expr, ctx) => {
    const reason = validateCron(expr);
    if (reason) ctx.addIssue({ code: 'custom', message: `The cron field is not a valid cron expression: ${reason}.` });
  })
  .describe(
    'Recurring windows: a 5-field cron expression (minute hour day-of-month month day-of-week) or @hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually; read in `timezone`.',
  );
const duration = z
  .number()
  .int()
  .min(60)
  .max(MAX_DURATION_SECONDS)
  .describe(`Recurring windows: seconds each occurrence lasts (elapsed time), 60..${MAX_DURATION_SECONDS}.`);
const timezone = timezoneField('IANA time zone the cron expression is read in (default UTC); daylight-saving changes are followed.');
const ids = (what: string) => z.array(z.uuid()).max(500).describe(`${what} of the same project that the window covers.`);

const fields = {
  name,
  description,
  starts_at: instant('starts_at').nullable().describe('One-off windows: when it starts (ISO 8601).'),
  ends_at: instant('ends_at').nullable().describe('One-off windows: when it ends (ISO 8601), after starts_at.'),
  cron: cron.nullable(),
  duration_seconds: duration.nullable(),
  timezone,
  whole_project: z.boolean().describe('Covers every monitor and heartbeat of the project, those created later included.'),
  monitor_ids: ids('Monitors'),
  heartbeat_ids: ids('Heartbeats'),
  active: z.boolean().describe('false pauses the window: it covers nothing until set true again.'),
};

export const MaintenanceWindowCreateBody = z.object({
  project_id: z.uuid(),
  name: fields.name,
  description: fields.description.default(''),
  starts_at: fields.starts_at.optional(),
  ends_at: fields.ends_at.optional(),
  cron: fields.cron.optional(),
  duration_seconds: fields.duration_seconds.optional(),
  timezone: fields.timezone.default('UTC'),
  whole_project: fields.whole_project.default(false),
  monitor_ids: fields.monitor_ids.default([]),
  heartbeat_ids: fields.heartbeat_ids.default([]),
  active: fields.active.default(true),
});
export type MaintenanceWindowCreateBody = z.infer<typeof MaintenanceWindowCreateBody>;

/** PATCH: the fields sent replace the stored ones (null clears starts_at, ends_at, cron, duration_seconds); project_id is ignored. */
export const MaintenanceWindowUpdateBody = z.object(
  Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.optional()])) as {
    [K in keyof typeof fields]: z.ZodOptional<(typeof fields)[K]>;
  },
);
export type MaintenanceWindowUpdateBody = z.infer<typeof MaintenanceWindowUpdateBody>;

export const MaintenanceWindowListQuery = z.object({ project_id: z.uuid().optional() });

const Run = z.object({ starts_at: z.string(), ends_at: z.string() });

export const MaintenanceWindow = z
  .object({
    id: z.uuid(),
    project_id: z.uuid(),
    name: z.string(),
    description: z.string(),
    kind: z.enum(['one_off', 'recurring']).describe('Read-only: one_off (starts_at, ends_at) or recurring (cron, duration_seconds).'),
    starts_at: z.string().nullable(),
    ends_at: z.string().nullable(),
    cron: z.string().nullable(),
    duration_seconds: z.number().int().nullable(),
    timezone: z.string(),
    whole_project: z.boolean(),
    monitor_ids: z.array(z.uuid()),
    heartbeat_ids: z.array(z.uuid()),
    active: z.boolean(),
    in_progress: z.boolean().describe('Read-only: the window covers its subjects now.'),
    current_or_next: Run.nullable().describe('Read-only: the run in progress, else the next one; null when none is ahead.'),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'MaintenanceWindow' });
export type MaintenanceWindow = z.infer<typeof MaintenanceWindow>;
