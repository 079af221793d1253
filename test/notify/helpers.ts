import { randomUUID } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import type { DomainEvent } from '../../shared/src/contracts/events.ts';
import { EVENTS_CONSUMER } from '../../control-plane/src/notifications/events.ts';
import { startNotifyRole, type NotifyRole, type NotifyTuning } from '../../control-plane/src/notifications/role.ts';
import { WORKER_CONSUMER } from '../../control-plane/src/notifications/worker.ts';
import type { Call } from '../harness/api.ts';
import type { RecordedRequest } from '../harness/http.ts';
import type { TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';
import { eventually, publishJson } from '../harness/streams.ts';

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

export async function publishEvent(cp: TestControlPlane, event: DomainEvent, msgId = event.id): Promise<void> {
  await publishJson(cp.nats.nc, cp.nats.names.subjects.event(event.project_id, event.kind), event, msgId);
}

/** A notify role of its own on the control plane's database and NATS, tuned for tests. */
export function startTestNotifyRole(cp: TestControlPlane, tuning: NotifyTuning = {}): Promise<NotifyRole> {
  return startNotifyRole({
    sql: cp.db.sql,
    nc: cp.nats.nc,
    names: cp.nats.names,
    log: quietLog,
    config: cp.config,
    keys: cp.cp.keys,
    ...tuning,
  });
}

/** Resolves once the notify role has read every event published so far. */
export async function eventsRead(cp: TestControlPlane): Promise<void> {
  const jsm = await jetstreamManager(cp.nats.nc);
  await eventually(async () => {
    const info = await jsm.consumers.info(cp.nats.names.streams.events, EVENTS_CONSUMER);
    return info.num_pending === 0 && info.num_ack_pending === 0;
  }, 'the events to be read');
}

/** Resolves once the NOTIFY work queue holds nothing: every delivery message was acknowledged or ended. */
export async function queueDrained(cp: TestControlPlane): Promise<void> {
  const jsm = await jetstreamManager(cp.nats.nc);
  await eventually(async () => {
    const info = await jsm.consumers.info(cp.nats.names.streams.notify, WORKER_CONSUMER);
    const stream = await jsm.streams.info(cp.nats.names.streams.notify);
    return info.num_pending === 0 && info.num_ack_pending === 0 && stream.state.messages === 0;
  }, 'the NOTIFY queue to drain');
}

export async function deliveryRows(cp: TestControlPlane, eventId: string) {
  return cp.db.sql<{ id: string; integration_id: string; status: string; attempts: number; last_error: string | null }[]>`
    select id, integration_id, status, attempts, last_error from deliveries where event_id = ${eventId} order by created_at, id`;
}
