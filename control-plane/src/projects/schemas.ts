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

export const ProjectCreateBody = z.object({
  organization_id: z.uuid().optional().describe('Default: the first organization the caller owns, else the first they belong to.'),
  name: z.string().trim().min(1).max(255),
  description: z.string().max(1000).default(''),
  alert_group_seconds: alertGroupSeconds.optional(),
});

export const ProjectUpdateBody = z.object({
  name: z.string().trim().min(1).max(255).optional(),
  description: z.string().max(1000).optional(),
  alert_group_seconds: alertGroupSeconds.optional(),
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
