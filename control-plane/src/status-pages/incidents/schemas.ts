import { z } from 'zod';
import { incidentImpacts } from '../overall.ts';
import { componentTypes, MAX_COMPONENTS, noNul, titleField } from '../schemas.ts';
import { incidentStatuses } from './rules.ts';

/** How much one incident holds. */
export const MAX_UPDATES = 500;
export const MAX_MESSAGE = 10_000;
export const MAX_POSTMORTEM = 50_000;

const title = titleField('What readers see first, e.g. "Checkout is failing".');
const impact = z
  .enum(incidentImpacts)
  .describe(
    'How much it hurts: none, minor, major or critical. While published and not resolved, it raises the page’s banner (minor to at least degraded, major to at least partial_outage, critical to major_outage).',
  );
const status = z
  .enum(incidentStatuses)
  .describe('investigating, identified, monitoring or resolved. Resolved sets resolved_at; any other status reopens a resolved incident.');
const message = z
  .string()
  .trim()
  .min(1)
  .max(MAX_MESSAGE)
  .refine(...noNul('message'))
  .describe(`Markdown (${MAX_MESSAGE} characters at most). Raw HTML is shown as text; links go to http, https and mailto addresses only.`);

export const IncidentComponentRef = z.object({
  type: z.enum(componentTypes),
  id: z.uuid().describe('A monitor or heartbeat the page shows (one of its components, or of its project when it has no groups).'),
});
export type IncidentComponentRef = z.infer<typeof IncidentComponentRef>;

const components = z
  .array(IncidentComponentRef)
  .max(MAX_COMPONENTS)
  .describe('The components it affects, each once; shown with the incident under the names the page gives them.');

export const StatusPageIncidentCreateBody = z.object({
  title,
  impact: impact.default('minor'),
  status: status.default('investigating'),
  message: message.describe('The first update of its timeline (Markdown).'),
  components: components.default([]),
  published: z.boolean().default(false).describe('Shown on the public page now; false (the default): a draft, seen here only.'),
});
export type StatusPageIncidentCreateBody = z.infer<typeof StatusPageIncidentCreateBody>;

/** PATCH: the fields sent replace the stored ones; the status moves by updates (POST .../updates). */
export const StatusPageIncidentUpdateBody = z.object({
  title: title.optional(),
  impact: impact.optional(),
  components: components.optional(),
  published: z.boolean().optional().describe('true publishes it; false takes it off the public page (a draft again).'),
  postmortem: z
    .string()
    .max(MAX_POSTMORTEM)
    .refine(...noNul('postmortem'))
    .optional()
    .describe(`What happened and what changes, in Markdown (${MAX_POSTMORTEM} characters at most); "" for none.`),
  postmortem_published: z.boolean().optional().describe('Shown with the incident on the public page (once the incident is published).'),
});
export type StatusPageIncidentUpdateBody = z.infer<typeof StatusPageIncidentUpdateBody>;

export const IncidentUpdatePostBody = z.object({ status, message });
export type IncidentUpdatePostBody = z.infer<typeof IncidentUpdatePostBody>;

export const IncidentListQuery = z.object({
  status: z.enum(['open', 'resolved']).optional().describe('open: not resolved; resolved. Default: both.'),
});

export const IncidentParams = z.object({ id: z.uuid().describe('The status page.'), incident_id: z.uuid() });

const IncidentUpdate = z.object({
  id: z.uuid(),
  status: z.enum(incidentStatuses),
  message: z.string().describe('Markdown.'),
  at: z.string(),
  by: z.string().nullable().describe('Who posted it; null: posted on its own when the outage it was drafted from ended or began.'),
});

export const StatusPageIncident = z
  .object({
    id: z.uuid(),
    status_page_id: z.uuid(),
    title: z.string(),
    impact: z.enum(incidentImpacts),
    status: z.enum(incidentStatuses),
    published: z.boolean().describe('Shown on the public page; false: a draft.'),
    published_at: z.string().nullable(),
    components: z.array(
      IncidentComponentRef.extend({
        name: z
          .string()
          .nullable()
          .describe('As the page shows it (its display name, else its own name); null once the page no longer shows it.'),
      }),
    ),
    updates: z.array(IncidentUpdate).describe('Its timeline, newest first.'),
    postmortem: z.string().describe('Markdown; "" for none.'),
    postmortem_published: z.boolean(),
    postmortem_published_at: z.string().nullable(),
    source: z
      .object({
        type: z.enum(componentTypes),
        id: z.uuid().nullable().describe('The monitor or heartbeat; null once it is deleted.'),
        monitor_incident_id: z.uuid().nullable().describe("The monitor's incident (GET /monitors/{id}/incidents); null for a heartbeat."),
        ended_at: z
          .string()
          .nullable()
          .describe(
            'When the outage ended; null while it goes on. Set on an incident a person has spoken for, it suggests a resolved update.',
          ),
      })
      .nullable()
      .describe('The outage it was drafted from; null for an incident written by a person.'),
    suggested_update: z
      .object({ status: z.enum(incidentStatuses), message: z.string() })
      .nullable()
      .describe(
        'An update worth posting now (POST .../updates), as the dashboard offers it: "resolved" once the outage it was drafted from has ended while the incident, which a person speaks for, is still open. Null otherwise.',
      ),
    created_at: z.string(),
    updated_at: z.string(),
    resolved_at: z.string().nullable(),
  })
  .meta({ id: 'StatusPageIncident' });
export type StatusPageIncident = z.infer<typeof StatusPageIncident>;
