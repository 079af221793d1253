/**
 * Renders docs/streams.md from the zod schemas of every message that crosses NATS, so the
 * published contract cannot drift from the code. `npm run docs:streams` rewrites the file; a
 * test fails when it is stale.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { AgentPresence } from './agent.ts';
import { DomainEvent } from './events.ts';
import { Assignment, CheckResult } from './monitoring.ts';
import { Notification, NotifyJob } from './notify.ts';
import { HeartbeatEntry, LeaseHolder, Ping } from './pings.ts';

interface Entry {
  title: string;
  where: string;
  body: string;
  schema: z.ZodType;
}

const ns = '<ns>';

export const documented: Entry[] = [
  {
    title: 'RESULTS: one message per check',
    where: `stream \`${ns}_RESULTS\`, subject \`${ns}.results.<region>.<monitor_id>\`, limits retention (7 days), file storage`,
    body: [
      'Published by probe agents with `Nats-Msg-Id: <monitor_id>:<region>:<scheduled_at in ms>`: a slot is stored once even',
      'when two agents check it during a takeover or a buffered result is published again (10-minute duplicate window).',
      'A failure is published only after an immediate re-check (`attempts: 2`). The control plane reads it through the',
      'durable consumer `ingest`; outside programs may attach their own consumers.',
    ].join('\n'),
    schema: CheckResult,
  },
  {
    title: 'EVENTS: state transitions',
    where: `stream \`${ns}_EVENTS\`, subject \`${ns}.events.<project_id>.<kind>\` (kind has a dot: \`monitor.down\`), limits retention (30 days)`,
    body: [
      'Written to an outbox in the same transaction as the transition and published with `Nats-Msg-Id` = `id`, so each',
      'transition is published once. Subscribe to `<ns>.events.*.monitor.>` for every monitor event of every project,',
      'or `<ns>.events.<project_id>.>` for one project. Kinds: `monitor.down`, `monitor.up`, `heartbeat.down`,',
      '`heartbeat.up`, `heartbeat.late`, `heartbeat.started`, `trigger.fired`.',
    ].join('\n'),
    schema: DomainEvent,
  },
  {
    title: 'PINGS: heartbeat pings',
    where: `stream \`${ns}_PINGS\`, subject \`${ns}.pings.<partition>.<heartbeat_id>\` (partition = first 32 bits of md5(id) mod \`PING_PARTITIONS\`), limits retention (7 days)`,
    body: [
      'Published by every ping edge (the control plane and each probe agent\'s `PING_PORT`) before it answers `200 OK`,',
      'with `Nats-Msg-Id` = `id`. Each partition is read by one deadline process at a time through the durable consumer',
      '`deadline-<partition>`; a process takes partitions with leases in KV `leases`.',
    ].join('\n'),
    schema: Ping,
  },
  {
    title: 'NOTIFY: deliveries to integrations',
    where: `stream \`${ns}_NOTIFY\` (work queue), subject \`${ns}.notify.<integration_type>\``,
    body: [
      'One message per delivery of one event to one integration, with `Nats-Msg-Id` = `delivery_id`. The message only',
      'names the delivery: its content, attempts and outcome live in Postgres, so no secret or message text crosses NATS.',
      'Retried with exponential back-off; dead-lettered after `NOTIFY_MAX_ATTEMPTS`.',
    ].join('\n'),
    schema: NotifyJob,
  },
  {
    title: 'Webhook body: what a webhook integration receives',
    where: 'HTTP POST to the integration\'s URL, headers `Idempotency-Key` (the delivery id), `X-Uptime-Timestamp` and, with a secret, `X-Uptime-Signature: sha256=<hex HMAC of "<timestamp>.<body>">`',
    body: 'Not a NATS message, but a public contract built from the same events.',
    schema: Notification,
  },
  {
    title: 'KV assignments: what each region checks',
    where: `bucket \`${ns}_assignments\`, key \`<region>.<monitor_id>\``,
    body: [
      'Written by the control plane\'s assigner from Postgres (the truth): put on create and update, deleted on pause',
      'and delete, reconciled at start-up and when a region appears or disappears. Agents watch their region\'s keys.',
      'The basic-auth password is sealed (AES-256-GCM) with the key agents get as `AGENT_KEY`.',
    ].join('\n'),
    schema: Assignment,
  },
  {
    title: 'KV agents: who is alive',
    where: `bucket \`${ns}_agents\`, key \`<region>.<agent_id>\`, bucket TTL 15 s`,
    body: 'Each probe agent refreshes its key every 5 s and deletes it when it stops. The live agents of a region share its monitors by rendezvous hashing.',
    schema: AgentPresence,
  },
  {
    title: 'KV heartbeats: ids a ping edge accepts',
    where: `bucket \`${ns}_heartbeats\`, key \`<heartbeat_id>\``,
    body: 'Kept from Postgres by the deadline process holding the heartbeat\'s partition, so a regional edge answers 404 for unknown ids without Postgres.',
    schema: HeartbeatEntry,
  },
  {
    title: 'KV leases: who owns which partition',
    where: `bucket \`${ns}_leases\`, keys \`deadline.<partition>\` and \`deadline-members.<n>\`, bucket TTL 10 s`,
    body: 'Taken with create, renewed every 3 s by revision (compare-and-set); a process that cannot renew stops working on the partition at once.',
    schema: LeaseHolder,
  },
];

export function renderStreamsDoc(entries: Entry[] = documented): string {
  const parts = [
    '# Streams, subjects and buckets',
    '',
    '<!-- Generated by `npm run docs:streams` from shared/src/contracts/*.ts. Do not edit by hand. -->',
    '',
    'Every name is prefixed by the namespace (`NATS_NAMESPACE`, default `uptime`), written `<ns>` below. Names',
    'and subjects are built in one place, `shared/src/subjects.ts`. Messages are JSON; each has one zod schema',
    'in `shared/src/contracts/`, whose JSON Schema is given here. Consumers must ignore fields they do not know:',
    'fields may be added, never removed or changed in meaning, without a new subject.',
    '',
  ];
  for (const e of entries) {
    parts.push(`## ${e.title}`, '', e.where + '.', '', e.body, '', '```json', JSON.stringify(z.toJSONSchema(e.schema, { target: 'draft-2020-12' }), null, 2), '```', '');
  }
  return parts.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const out = new URL('../../../docs/streams.md', import.meta.url);
  writeFileSync(out, renderStreamsDoc());
  process.stdout.write(`wrote ${fileURLToPath(out)}\n`);
}
