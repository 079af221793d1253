import { z } from 'zod';

export const ProjectSummary = z
  .object({ id: z.uuid(), name: z.string(), description: z.string() })
  .meta({ id: 'ProjectSummary', description: 'The project a resource belongs to.' });
export type ProjectSummary = z.infer<typeof ProjectSummary>;

export const Project = z
  .object({
    id: z.uuid(),
    organization_id: z.uuid(),
    name: z.string(),
    description: z.string(),
    alert_group_seconds: z
      .number()
      .int()
      .nullable()
      .describe('Extension: grouping window of monitor alerts in seconds; null: each alert is sent on its own.'),
    renotify_minutes: z.number().int().nullable().describe('Extension: re-notify open, unacknowledged alerts this often; null: never.'),
    escalate_after_minutes: z
      .number()
      .int()
      .nullable()
      .describe('Extension: escalate an alert unacknowledged this long to the escalation integrations; null: never.'),
    escalation_integration_ids: z.array(z.uuid()).describe('Extension: who hears of an escalation (and of every step after it).'),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Project' });
export type Project = z.infer<typeof Project>;

const alertGroupSeconds = z
  .number()
  .int()
  .min(5)
  .max(600)
  .nullable()
  .describe(
    "Extension: group the monitors' alerts. A monitor's down (or up) opens a window of this many seconds; the project's monitor alerts that occur within it are sent at its end as one message per integration listing them (an integration that gets only one of them gets it as usual; PagerDuty always gets each on its own). Null (the default): every alert is sent at once, on its own. The usual value is 30.",
  );

/** A duration of the response policy in minutes: 1 to 10,080 (7 days), null for off. */
const policyMinutes = z.number().int().min(1).max(10_080).nullable();
const renotifyMinutes = policyMinutes.describe(
  'Extension: while an alert is open and no one has acknowledged it, send it again every this many minutes (1 to 10,080) to the integrations that got it (and, once escalated, to the escalation ones). Null (the default): never. A snooze pauses it; acknowledging or resolving the alert ends it.',
);
const escalateAfterMinutes = policyMinutes.describe(
  'Extension: an alert no one has acknowledged this many minutes after it opened is sent to escalation_integration_ids (once); null (the default): no escalation.',
);
const escalationIntegrationIds = z
  .array(z.uuid())
  .max(20)
  .refine((ids) => new Set(ids).size === ids.length, 'The escalation_integration_ids field must not repeat an id.')
  .describe("Extension: the project's integrations that hear of escalations (replaced as a whole; [] for none).");

export const ProjectCreateBody = z.object({
  organization_id: z.uuid().optional().describe('Default: the first organization the caller owns, else the first they belong to.'),
  name: z.string().trim().min(1).max(255),
  description: z.string().max(1000).default(''),
  alert_group_seconds: alertGroupSeconds.optional(),
  renotify_minutes: renotifyMinutes.optional(),
  escalate_after_minutes: escalateAfterMinutes.optional(),
});

export const ProjectUpdateBody = z.object({
  name: z.string().trim().min(1).max(255).optional(),
  description: z.string().max(1000).optional(),
  alert_group_seconds: alertGroupSeconds.optional(),
  renotify_minutes: renotifyMinutes.optional(),
  escalate_after_minutes: escalateAfterMinutes.optional(),
  escalation_integration_ids: escalationIntegrationIds.optional(),
});

export const Organization = z
  .object({
    id: z.uuid(),
    name: z.string(),
    role: z.enum(['owner', 'member']).describe("The caller's role in it."),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Organization' });
export type Organization = z.infer<typeof Organization>;
