import { z } from 'zod';

export const integrationTypes = ['webhook', 'slack', 'discord', 'teams', 'telegram', 'email', 'pagerduty', 'ntfy'] as const;
export const IntegrationType = z.enum(integrationTypes);
export type IntegrationType = z.infer<typeof IntegrationType>;

/**
 * What an integration is told about one event. Also, to the letter, the JSON body a webhook
 * integration receives (a public contract): `id` is the event's id, `event` its kind.
 */
/**
 * What a person can do about an alert without signing in: signed links, made when the message is
 * sent (never stored). A GET of either shows a page with the button; a POST does it (curl -X POST).
 */
export const AlertActions = z.object({
  alert_id: z.uuid().describe('The alert (GET /alerts/{id}): one outage of a monitor or heartbeat as people respond to it.'),
  acknowledge_url: z.url().describe('Acknowledges the alert: re-notifying and escalation stop.'),
  snooze_url: z.url().describe('Snoozes the alert for a while (POST with minutes=N; the page offers 1 h, 4 h, 24 h).'),
  view_url: z.url().describe("The monitor's or heartbeat's page in the dashboard (sign-in required)."),
});
export type AlertActions = z.infer<typeof AlertActions>;

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
  actions: AlertActions.optional().describe(
    'Extension: on messages about an open alert (a down, a re-notification, an escalation), the links that act on it.',
  ),
});
export type Notification = z.infer<typeof Notification>;
