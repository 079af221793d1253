import { randomUUID } from 'node:crypto';
import type { DomainEvent } from '../../shared/src/contracts/events.ts';
import { startNotifyRole, type NotifyRole, type NotifyTuning } from '../../control-plane/src/notifications/role.ts';
import { recordEvent } from '../../control-plane/src/platform/outbox.ts';
import type { Call } from '../harness/api.ts';
import type { RecordedRequest } from '../harness/http.ts';
import type { TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';
import { eventually } from '../harness/streams.ts';

export const botToken = '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw';
export const routingKey = 'R0123456789abcdefghijklmnopqrstu';
export const webhookSecret = 'whsec-test-signing-secret-123';

/** Where each HTTP channel of `everyChannel` posts, below the sink's URL. */
export const channelPaths = {
  webhook: '/webhook',
  slack: '/slack/',
  discord: '/discord/',
  teams: '/teams/',
  telegram: '/telegram/',
  pagerduty: '/pagerduty/',
  ntfy: '/ntfy/',
} as const;
export type HttpChannel = keyof typeof channelPaths;

/** One integration of every type in the project, all pointed at the local sink and SMTP server. */
export async function everyChannel(api: Call, projectId: string, sinkUrl: string, smtpUrl: string): Promise<Record<string, string>> {
  const configs: Record<string, Record<string, unknown>> = {
    webhook: { url: `${sinkUrl}/webhook`, secret: webhookSecret },
    slack: { url: `${sinkUrl}/slack/services/T000/B000/slacktoken` },
    discord: { url: `${sinkUrl}/discord/api/webhooks/1/discordtoken` },
    teams: { url: `${sinkUrl}/teams/webhookb2/teamstoken` },
    telegram: { bot_token: botToken, chat_id: '-100123', api_base_url: `${sinkUrl}/telegram` },
    pagerduty: { routing_key: routingKey, events_url: `${sinkUrl}/pagerduty/v2/enqueue` },
    ntfy: { server: `${sinkUrl}/ntfy`, topic: 'ops', token: 'tk_ntfytoken' },
    email: { recipients: ['ops@example.com', 'dev@example.com'], smtp_url: smtpUrl },
  };
  const ids: Record<string, string> = {};
  for (const [type, config] of Object.entries(configs)) {
    const res = await api('POST', '/integrations', { project_id: projectId, name: `${type} channel`, type, config });
    if (res.status !== 201) throw new Error(`integration ${type}: ${JSON.stringify(res.body)}`);
    ids[type] = res.body.data.id;
  }
  return ids;
}

/** The requests each HTTP channel made, by channel. */
export function byChannel(requests: readonly RecordedRequest[]): Record<HttpChannel, RecordedRequest[]> {
  const out = Object.fromEntries(Object.keys(channelPaths).map((k) => [k, [] as RecordedRequest[]])) as Record<
    HttpChannel,
    RecordedRequest[]
  >;
  for (const r of requests) {
    const channel = (Object.entries(channelPaths) as [HttpChannel, string][]).find(([, p]) => r.url.startsWith(p));
    if (channel) out[channel[0]].push(r);
  }
  return out;
}

export function domainEvent(projectId: string, e: Pick<DomainEvent, 'kind' | 'subject' | 'data'> & { occurred_at?: string }): DomainEvent {
  return { id: randomUUID(), occurred_at: e.occurred_at ?? new Date().toISOString(), project_id: projectId, ...e };
}

/** Records an event in the outbox, as a state change's transaction does: the notify role routes it from there. */
export async function recordAlert(cp: TestControlPlane, event: DomainEvent): Promise<void> {
  await cp.db.sql.begin((tx) => recordEvent(tx, event));
}

/** A notify role of its own on the control plane's database, tuned for tests. */
export function startTestNotifyRole(cp: TestControlPlane, tuning: NotifyTuning = {}): Promise<NotifyRole> {
  return startNotifyRole({
    sql: cp.db.sql,
    log: quietLog,
    config: cp.config,
    keys: cp.cp.keys,
    pollMs: 200,
    ...tuning,
  });
}

/** Resolves once every alert event recorded so far has its deliveries. */
export async function alertsRouted(cp: TestControlPlane): Promise<void> {
  await eventually(async () => {
    const [row] = await cp.db.sql<{ n: number }[]>`select count(*)::int as n from outbox_events where notified_at is null`;
    return row!.n === 0;
  }, 'the alert events to be routed');
}

/** Resolves once no delivery waits or is being sent: each one delivered or dead. */
export async function deliveriesSettled(cp: TestControlPlane): Promise<void> {
  await eventually(async () => {
    const [row] = await cp.db.sql<{ n: number }[]>`select count(*)::int as n from deliveries where status in ('pending', 'sending')`;
    return row!.n === 0;
  }, 'every delivery to settle');
}

export async function deliveryRows(cp: TestControlPlane, eventId: string) {
  return cp.db.sql<{ id: string; integration_id: string; status: string; attempts: number; last_error: string | null }[]>`
    select id, integration_id, status, attempts, last_error from deliveries where event_id = ${eventId} order by created_at, id`;
}
