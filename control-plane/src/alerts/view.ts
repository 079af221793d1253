import { z } from 'zod';
import { messageFor } from '../notifications/content.ts';
import { formatTimestamp } from '../platform/http/time.ts';
import type { AlertRow } from './repo.ts';

export const AlertStatus = z.enum(['open', 'acknowledged', 'resolved']);

export const Alert = z
  .object({
    id: z.uuid().describe('The id of the down event that opened it (the `id` of that notification).'),
    project_id: z.uuid(),
    subject: z.object({ type: z.enum(['monitor', 'heartbeat']), id: z.uuid(), name: z.string() }),
    incident_id: z.uuid().nullable().describe("The monitor's incident (GET /monitors/{id}/incidents); null for a heartbeat."),
    status: AlertStatus.describe('open until acknowledged or resolved; resolved once its subject is up again (acknowledged or not).'),
    message: z.string().describe('What its first message said.'),
    opened_at: z.string(),
    acknowledged_at: z.string().nullable(),
    acknowledged_by: z.string().nullable(),
    snoozed_until: z
      .string()
      .nullable()
      .describe(
        "Until when it is (or was last) snoozed: its own snooze or its monitor's or heartbeat's, whichever ends later; null when it never was.",
      ),
    snoozed_by: z.string().nullable(),
    resolved_at: z.string().nullable(),
    renotified: z.number().int().describe('Re-notifications sent.'),
    escalated_at: z.string().nullable(),
    next_step_at: z
      .string()
      .nullable()
      .describe('When the response policy looks at it next (a re-notification or the escalation may then be due); null: never again.'),
  })
  .meta({
    id: 'Alert',
    description:
      'One outage of a monitor or heartbeat as people respond to it: opened when its down is sent, acknowledged, snoozed, re-notified and escalated by the project policy, resolved with its up.',
  });
export type Alert = z.infer<typeof Alert>;

const ts = (v: string | null) => (v === null ? null : formatTimestamp(v));

export function alertView(a: AlertRow): Alert {
  const own = a.snoozed_until;
  const subject = a.subject_snoozed_until;
  const snoozed =
    own === null
      ? subject
      : subject === null
        ? own
        : Date.parse(formatTimestamp(own)) >= Date.parse(formatTimestamp(subject))
          ? own
          : subject;
  return {
    id: a.id,
    project_id: a.project_id,
    subject: { type: a.monitor_id ? 'monitor' : 'heartbeat', id: (a.monitor_id ?? a.heartbeat_id)!, name: a.subject_name },
    incident_id: a.incident_id,
    status: a.resolved_at !== null ? 'resolved' : a.acknowledged_at !== null ? 'acknowledged' : 'open',
    message: messageFor({ ...a.opening, subject: { ...a.opening.subject, name: a.subject_name } }),
    opened_at: formatTimestamp(a.opened_at),
    acknowledged_at: ts(a.acknowledged_at),
    acknowledged_by: a.acknowledged_by,
    snoozed_until: ts(snoozed),
    snoozed_by: a.snoozed_by,
    resolved_at: ts(a.resolved_at),
    renotified: a.renotified,
    escalated_at: ts(a.escalated_at),
    next_step_at: ts(a.next_step_at),
  };
}
