import { dependsOnField, SubjectRefSchema } from '../dependencies/schemas.ts';
import { z } from 'zod';
import { utcDateTime } from '../platform/http/date-time.ts';
import { ProjectSummary } from '../projects/schemas.ts';
import { patternProblem } from '../../../shared/src/checks/assertions.ts';
import { MAX_PATTERN_LENGTH } from '../../../shared/src/contracts/checks.ts';
import { DEFAULT_SUCCESS_EXIT_CODES, outputMatches, outputOutcomes } from './output.ts';
import { validateCron, validateTimezone } from './schedule.ts';

export const DEFAULT_GRACE_PERIOD = 3600;
export const heartbeatStatuses = ['new', 'up', 'late', 'down', 'running', 'paused'] as const;

/** The zone as the runtime names it ("europe/berlin" -> "Europe/Berlin"), so cron and Intl agree. */
function canonicalTimezone(tz: string): string {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    return tz;
  }
}

/** An IANA time zone, stored as the runtime names it; the heartbeats' and the maintenance windows' cron schedules take one. */
export function timezoneField(description: string) {
  return z
    .string()
    .min(1, { abort: true })
    .max(64, { abort: true })
    .superRefine((tz, ctx) => {
      if (!validateTimezone(tz))
        ctx.addIssue({ code: 'custom', message: 'The timezone field must be a valid IANA time zone, such as Europe/Berlin.' });
    })
    .overwrite(canonicalTimezone)
    .describe(description);
}

// Postgres text cannot hold NUL: refused here rather than failing the insert with a 500.
const name = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .refine((v) => !v.includes('\u0000'), 'The name field must not contain NUL characters.');
const gracePeriod = z.number().int().min(60).max(86_400).describe('Seconds, 60..86400.');
const cronSchedule = z
  .string()
  .trim()
  .max(255, { abort: true })
  .superRefine((expr, ctx) => {
    const reason = validateCron(expr);
    if (reason) ctx.addIssue({ code: 'custom', message: `The cron_schedule field is not a valid cron expression: ${reason}.` });
  })
  .describe(
    'A 5-field cron expression (minute hour day-of-month month day-of-week) or @hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually; evaluated in `timezone`.',
  );
// Postgres and the timestamp format both stop at year 9999; before 1970 nothing is scheduled.
const nextPingAt = utcDateTime('next_ping_at', {
  earliest: new Date(Date.UTC(1970, 0, 1)),
  latest: new Date(Date.UTC(9999, 11, 31, 23, 59, 59)),
}).describe('ISO 8601 with Z or an offset (up to ±23:59), such as `2026-01-01T00:00:00Z`; stored and answered in UTC.');
const period = z
  .number()
  .int()
  .min(60)
  .max(31_536_000)
  .describe('Extension: seconds between pings when there is no cron schedule, 60..31536000.');
const timezone = timezoneField('Extension: IANA time zone the cron schedule is read in.');
const runSeconds = z.number().int().min(1).max(31_536_000);
const maxDuration = runSeconds.describe(
  'Extension: seconds a run may take after its /start before the heartbeat goes down (reason too_long), 1..31536000; null: the grace period (reason start_timeout).',
);
const minDuration = runSeconds.describe(
  'Extension: seconds below which a run that reports success counts as failed (reason too_short), 1..31536000; null: no minimum. Measured from its /start.',
);
const tooFrequentRatio = z
  .number()
  .gt(0)
  .max(1)
  .describe(
    'Extension: a success sooner than this fraction of the expected interval (the period, or the gap between cron runs) after the previous success counts as failed (reason too_frequent); null: off.',
  );
const alertAfterFailures = z
  .number()
  .int()
  .min(1)
  .max(100)
  .describe('Extension: failed runs in a row that make the heartbeat down (1: the first). A run that does not report is never tolerated.');
const successExitCodes = z
  .array(z.number().int().min(0).max(255))
  .min(1)
  .max(256)
  .refine((codes) => new Set(codes).size === codes.length, 'The success_exit_codes field must not list a code twice.')
  .describe('Extension: exit codes of `/<code>` pings that mean success; any other code is a failure. Default [0].');
const OutputRule = z
  .object({
    match: z
      .enum(outputMatches)
      .describe('contains: the text appears in the output (case-sensitive); regex: an RE2 pattern finds a match.'),
    value: z.string().min(1).max(MAX_PATTERN_LENGTH),
    outcome: z
      .enum(outputOutcomes)
      .describe(
        'fail: a success whose output matches counts as failed (reason output); success: a failure whose output matches counts as a success.',
      ),
  })
  .superRefine((rule, ctx) => {
    const problem = rule.match === 'regex' ? patternProblem(rule.value) : undefined;
    if (problem) ctx.addIssue({ code: 'custom', path: ['value'], message: problem });
  });
const outputRules = z
  .array(OutputRule)
  .max(20)
  .describe("Extension: rules on a ping's output (its request body, as kept); the first that turns a run's outcome applies.");
const integrationIds = z
  .array(z.uuid())
  .max(100)
  .describe("Extension: integrations of the same project that receive this heartbeat's alerts.");

export const HeartbeatCreateBody = z.object({
  name,
  project_id: z.uuid(),
  grace_period: gracePeriod.default(DEFAULT_GRACE_PERIOD),
  cron_schedule: cronSchedule.nullable().optional(),
  next_ping_at: nextPingAt.nullable().optional().describe('Default: the first cron occurrence after now, else now + period, else none.'),
  period: period.nullable().optional(),
  timezone: timezone.default('UTC'),
  active: z.boolean().default(true).describe('Extension: false pauses the heartbeat.'),
  integration_ids: integrationIds.default([]),
  depends_on: dependsOnField.optional(),
  max_duration: maxDuration.nullable().optional(),
  min_duration: minDuration.nullable().optional(),
  too_frequent_ratio: tooFrequentRatio.nullable().optional(),
  alert_after_failures: alertAfterFailures.default(1),
  success_exit_codes: successExitCodes.default([...DEFAULT_SUCCESS_EXIT_CODES]),
  output_rules: outputRules.default([]),
});
export type HeartbeatCreateBody = z.infer<typeof HeartbeatCreateBody>;

/** PATCH: every field optional; null clears cron_schedule, next_ping_at and period. project_id is ignored. */
export const HeartbeatUpdateBody = z.object({
  name: name.optional(),
  grace_period: gracePeriod.optional(),
  cron_schedule: cronSchedule.nullable().optional(),
  next_ping_at: nextPingAt
    .nullable()
    .optional()
    .describe('null clears it. Left out while the schedule changes, it is recomputed from now.'),
  period: period.nullable().optional(),
  timezone: timezone.optional(),
  active: z.boolean().optional(),
  integration_ids: integrationIds.optional(),
  depends_on: dependsOnField.optional(),
  max_duration: maxDuration.nullable().optional(),
  min_duration: minDuration.nullable().optional(),
  too_frequent_ratio: tooFrequentRatio.nullable().optional(),
  alert_after_failures: alertAfterFailures.optional(),
  success_exit_codes: successExitCodes.optional(),
  output_rules: outputRules.optional(),
});
export type HeartbeatUpdateBody = z.infer<typeof HeartbeatUpdateBody>;

export const HeartbeatListQuery = z.object({ project_id: z.uuid().optional() });

export const Heartbeat = z
  .object({
    id: z.uuid(),
    name: z.string(),
    project_id: z.uuid(),
    grace_period: z.number().int(),
    cron_schedule: z.string().nullable(),
    next_ping_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    ping_url: z.string().describe('{ping_base_url}/heartbeat/<id>'),
    start_url: z.string().describe('ping_url + /start'),
    fail_url: z.string().describe('ping_url + /fail'),
    project: ProjectSummary,
    status: z
      .enum(heartbeatStatuses)
      .describe(
        'Read-only: new (never pinged), up, late (past next_ping_at, inside grace), down, running (after /start), paused (active is false).',
      ),
    last_ping_at: z.string().nullable().describe('Read-only.'),
    period: z.number().int().nullable(),
    timezone: z.string(),
    active: z.boolean(),
    integration_ids: z.array(z.uuid()),
    depends_on: z.array(SubjectRefSchema).describe('Extension: the monitors and heartbeats it depends on (none: an empty list).'),
    snoozed_until: z
      .string()
      .nullable()
      .describe('Extension: its alerts are held until then (POST /heartbeats/{id}/snooze); null when not snoozed.'),
    max_duration: z.number().int().nullable(),
    min_duration: z.number().int().nullable(),
    too_frequent_ratio: z.number().nullable(),
    alert_after_failures: z.number().int(),
    success_exit_codes: z.array(z.number().int()),
    output_rules: z.array(OutputRule),
    last_success_at: z.string().nullable().describe('Read-only: the last run judged a success.'),
    failed_runs: z.number().int().describe('Read-only: failed runs in a row since the last success.'),
    running: z
      .array(z.object({ rid: z.string().nullable(), started_at: z.string() }))
      .describe('Read-only: the open runs (after a /start, before its completion); rid null for the run without a run id.'),
    snooze_url: z
      .string()
      .describe(
        'Extension: ping_url + /snooze?sig=..., signed: GET or POST it with minutes=N (0 ends the snooze) to snooze the heartbeat from a script. Keep it as secret as an API token.',
      ),
  })
  .meta({ id: 'Heartbeat' });
export type Heartbeat = z.infer<typeof Heartbeat>;
