import { z } from 'zod';

export const integrationTypes = ['webhook', 'slack', 'discord', 'teams', 'telegram', 'email', 'pagerduty', 'ntfy'] as const;
export const IntegrationType = z.enum(integrationTypes);
export type IntegrationType = z.infer<typeof IntegrationType>;

/**
 * What an integration is told about one event. Also, to the letter, the JSON body a webhook
 * integration receives (a public contract): `id` is the event's id, `event` its kind.
 */
export const Notification = z.object({
  id: z.uuid(),
  event: z
    .string()
    .describe(
      'monitor.down, monitor.up, heartbeat.down, heartbeat.up, trigger.fired or integration.test; extensions: monitor.flapping, monitor.settled, and alerts.grouped (several monitor alerts of a project in one message: subject is the project, data.alerts lists them).',
    ),
  message: z.string(),
  occurred_at: z.iso.datetime(),
  project: z.object({ id: z.uuid(), name: z.string() }),
  subject: z.object({
    type: z.enum(['monitor', 'heartbeat', 'trigger', 'integration', 'region', 'maintenance_window', 'project']),
    id: z.uuid(),
    name: z.string(),
  }),
  data: z.record(z.string(), z.unknown()),
});
export type Notification = z.infer<typeof Notification>;
