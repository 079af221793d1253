import { z } from 'zod';
import type { Notification } from '../../../../shared/src/contracts/notify.ts';
import { compose, type MessageTemplate } from '../templates.ts';
import { actionLinks, channel, httpUrl, jsonPost, postAll, type ChannelSpec } from './types.ts';

const PagerDutyConfig = z.strictObject({
  routing_key: z
    .string()
    .regex(/^[A-Za-z0-9]{20,64}$/, 'A routing key is the 32-character integration key of an Events API v2 integration.')
    .describe('Write-only.'),
  events_url: httpUrl.default('https://events.pagerduty.com/v2/enqueue'),
  severity: z.enum(['critical', 'error', 'warning', 'info']).default('critical').describe('Severity of the incidents opened.'),
});

/**
 * One PagerDuty incident per monitor incident (per heartbeat down period, per regional incident):
 * the down event opens it, the up event resolves it with the same key, and the alert's steps
 * (acknowledged, escalated) name it too. Expiry warnings of a monitor share one incident per kind.
 * Anything else opens an incident of its own.
 */
export function dedupKey(n: Notification): string {
  const incident = typeof n.data.incident_id === 'string' ? `:${n.data.incident_id}` : '';
  if (n.event === 'monitor.regional_down' || n.event === 'monitor.regional_up') return `uptime:monitor:${n.subject.id}:regional${incident}`;
  if (n.event === 'monitor.degraded' || n.event === 'monitor.restored') {
    const period = typeof n.data.period_id === 'string' ? `:${n.data.period_id}` : '';
    return `uptime:monitor:${n.subject.id}:degraded${period}`;
  }
  if (n.event === 'monitor.flapping' || n.event === 'monitor.settled') return `uptime:monitor:${n.subject.id}:flapping`;
  // A monitor's certificate warnings (domain warnings) add to one open incident, apart from its outages.
  if (n.event === 'monitor.certificate_expiring') return `uptime:monitor:${n.subject.id}:certificate`;
  if (n.event === 'monitor.domain_expiring') return `uptime:monitor:${n.subject.id}:domain`;
  if (n.subject.type === 'monitor') return `uptime:monitor:${n.subject.id}${incident}`;
  if (n.subject.type === 'heartbeat') return `uptime:heartbeat:${n.subject.id}`;
  if (n.subject.type === 'integration') return `uptime:integration:${n.subject.id}`;
  return `uptime:event:${n.id}`;
}

/**
 * The summary is the message (a template's body when it has one); the action links are `links`
 * on the incident, after the monitored URL.
 */
export function pagerDutyEvent(n: Notification, routingKey: string, severity: string, template?: MessageTemplate | null) {
  const m = compose(n, template);
  const r = m.r;
  if (r.tone === 'up') return { routing_key: routingKey, event_action: 'resolve', dedup_key: dedupKey(n) };
  const links = [
    ...(r.link ? [{ href: r.link, text: n.subject.name }] : []),
    ...actionLinks(n).map((l) => ({ href: l.url, text: `${l.label} in uptime` })),
  ];
  return {
    routing_key: routingKey,
    event_action: 'trigger',
    dedup_key: dedupKey(n),
    client: 'uptime',
    payload: {
      summary: m.text().slice(0, 1024),
      source: typeof n.data.url === 'string' ? n.data.url : n.subject.name,
      severity: n.event === 'integration.test' ? 'info' : n.event === 'monitor.degraded' ? 'warning' : severity,
      timestamp: n.occurred_at,
      component: n.subject.name,
      group: n.project.name,
      class: n.event,
      custom_details: { message: n.message, ...Object.fromEntries(r.fields.map((f) => [f.label, f.value])) },
    },
    ...(links.length > 0 ? { links } : {}),
  };
}

/**
 * The Events API calls for one notification: one, but for a flapping monitor settling, which
 * resolves its "flapping" incident and, when it settled down, opens one for its outage (keyed by
 * the outage's incident, so the monitor's next up resolves it).
 */
export function pagerDutyEvents(n: Notification, routingKey: string, severity: string, template?: MessageTemplate | null) {
  // An acknowledgement here acknowledges the PagerDuty incident; a snooze has no Events API
  // counterpart (PagerDuty's own snooze is for its users), and a reminder repeats what PagerDuty
  // already keeps open and re-notifies by its own rules.
  if (n.event === 'alert.acknowledged') return [{ routing_key: routingKey, event_action: 'acknowledge', dedup_key: dedupKey(n) }];
  if (n.event === 'alert.snoozed' || n.event === 'monitor.snoozed' || n.event === 'heartbeat.snoozed' || n.event === 'alert.renotified')
    return [];
  if (n.event !== 'monitor.settled') return [pagerDutyEvent(n, routingKey, severity, template)];
  const resolve = { routing_key: routingKey, event_action: 'resolve', dedup_key: dedupKey(n) };
  if (n.data.status !== 'down' || typeof n.data.incident_id !== 'string') return [resolve];
  return [resolve, pagerDutyEvent({ ...n, event: 'monitor.down' }, routingKey, severity, template)];
}

export const pagerduty: ChannelSpec<typeof PagerDutyConfig> = {
  type: 'pagerduty',
  config: PagerDutyConfig,
  secrets: ['routing_key'],
  create: ({ http }) =>
    channel({
      build: ({ notification, config, template }) =>
        pagerDutyEvents(notification, config.routing_key, config.severity, template).map((e) => jsonPost(config.events_url, e)),
      transmit: (out) => postAll(http, out),
    }),
};
