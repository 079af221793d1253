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
import { Notification } from './notify.ts';
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
      '`heartbeat.up`, `heartbeat.late`, `heartbeat.started`, `trigger.fired`, `maintenance.started`, `maintenance.ended`,',
      '`monitor.flapping`, `monitor.settled`, `monitor.regional_down`, `monitor.regional_up`, `monitor.certificate_expiring`,',
      '`monitor.domain_expiring`, and about the deployment (project',
      'id all zeros) `region.degraded`, `region.recovered`. A regional incident (failing in some regions, fewer than the quorum:',
      'the monitor stays up) has `data` = `scope` (`regional`), `regions`, `cause`, `incident_id`, `started_at`, `evidence` when',
      'it opens, and `regions`, `incident_id`, `duration_seconds` when it closes.',
      'A maintenance window starting or ending (subject type `maintenance_window`) is published once per boundary, with',
      '`data` = `starts_at`, `ends_at` (the run in progress; null once ended), `whole_project`, `monitor_ids`, `heartbeat_ids`;',
      'alerts that occur inside a window are held rather than sent (docs/alerting.md), but still published here as they happen.',
      'So are the downs of a monitor or heartbeat whose parent is down (held with that outage), the changes of a flapping',
      "monitor, and those a project groups: EVENTS carries every transition; what is sent is the notify role's business.",
      '`monitor.flapping` (the change that made it flap) has `data` = `status` (`down` or `up` now), `changes` (within the window),',
      '`window_seconds`, `flapping_since`, `url`; `monitor.settled` (a whole window without a change) has `status`,',
      '`flapping_since`, `last_change_at`, `url` and, when down, `incident_id`.',
      "Expiry warnings are published once per threshold crossed (the monitor's `certificate_expiry_days`,",
      "`domain_expiry_days`), whatever the monitor's state: `monitor.certificate_expiring` has `data` = `url`, `certificate`",
      '(`subject`, `issuer`, `sans`, `valid_to`, `days_left` when checked) and `threshold_days`, at the check that crossed it;',
      '`monitor.domain_expiring` has `url`, `domain` (`name`, `expires_at`, `registrar`, `days_left` when looked up) and',
      '`threshold_days`, at the daily RDAP lookup (docs/checks.md).',
      'A heartbeat event has `data` = `reason`, `status`, `next_ping_at`, `last_ping_at`, `grace_period`, and `ping` (`kind`,',
      '`exit_code`, `region`, and `rid` and `run_duration_seconds` when it had them) when a ping caused it; a down or up has',
      '`down_since`, an up `duration_seconds`. `heartbeat.down` reasons: `missed`, `failed`, `output`, `too_short`, `too_frequent`,',
      '`too_long`, `start_timeout` (docs/heartbeats.md).',
    ].join('\n'),
    schema: DomainEvent,
  },
  {
    title: 'PINGS: heartbeat pings',
    where: `stream \`${ns}_PINGS\`, subject \`${ns}.pings.<partition>.<heartbeat_id>\` (partition = first 32 bits of md5(id) mod \`PING_PARTITIONS\`), limits retention (7 days)`,
    body: [
      "Published by every ping edge (the control plane and each probe agent's `PING_PORT`) before it answers `200 OK`,",
      'with `Nats-Msg-Id` = `id`. Each partition is read by one deadline process at a time through the durable consumer',
      '`deadline-<partition>`; a process takes partitions with leases in KV `leases`.',
    ].join('\n'),
    schema: Ping,
  },
  {
    title: 'Webhook body: what a webhook integration receives',
    where:
      'HTTP POST to the integration\'s URL, headers `Idempotency-Key` (the delivery id), `X-Uptime-Timestamp` and, with a secret, `X-Uptime-Signature: sha256=<hex HMAC of "<timestamp>.<body>">`',
    body: [
      'Not a NATS message, but a public contract built from the same events. A project that groups alerts',
      '(`alert_group_seconds`) sends its monitor alerts of one window as one body per integration: `event` = `alerts.grouped`,',
      '`subject` = the project, `data` = `status` (`down` or `up`), `count`, `window_seconds` and `alerts` (the first 50, each',
      'with `id` (the event id), `event`, `occurred_at`, `subject`, `message`, `url`, `incident_id`).',
    ].join('\n'),
    schema: Notification,
  },
  {
    title: 'KV assignments: what each region checks',
    where: `bucket \`${ns}_assignments\`, key \`<region>.<monitor_id>\``,
    body: [
      "Written by the control plane's assigner from Postgres (the truth): put on create and update, deleted on pause",
      "and delete, reconciled at start-up and when a region appears or disappears. Agents watch their region's keys.",
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
    body: "Kept from Postgres by the deadline process holding the heartbeat's partition, so a regional edge answers 404 for unknown ids without Postgres.",
    schema: HeartbeatEntry,
  },
  {
    title: 'KV leases: who owns which partition',
    where: `bucket \`${ns}_leases\`, keys \`deadline.<partition>\` and \`deadline-members.<n>\`, bucket TTL 10 s`,
    body: 'Taken with create, renewed every 3 s by revision (compare-and-set); a process that cannot renew stops working on the partition at once.',
    schema: LeaseHolder,
  },
];

/**
 * The JSON Schema a consumer validates with. It describes what our own receivers accept (zod's
 * input side), not the exact shape we emit today: a z.object takes unknown keys, so the published
 * objects are open too, or a validating consumer would break on the first added field. Listed
 * values (event kinds, error classes, ...) are published as `examples` of a string, since a new
 * value is a compatible addition as well.
 */
export function publishedSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io: 'input',
    override: ({ jsonSchema }) => {
      if (jsonSchema.type !== 'string' || !Array.isArray(jsonSchema.enum)) return;
      jsonSchema.examples = jsonSchema.enum;
      delete jsonSchema.enum;
      const open = 'Known values are listed as examples; new values may be added.';
      jsonSchema.description = jsonSchema.description ? `${jsonSchema.description}. ${open}` : open;
    },
  });
  return typeListsAsAnyOf(json) as Record<string, unknown>;
}

/**
 * zod writes a union of plain types as a list (`"type": ["string", "null"]`): valid JSON Schema,
 * but validators in strict mode (ajv's default) refuse it, so it is published as the same union
 * in anyOf, which every validator takes.
 */
function typeListsAsAnyOf(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(typeListsAsAnyOf);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'type' && Array.isArray(value)) out.anyOf = value.map((type: unknown) => ({ type }));
    else out[key] = typeListsAsAnyOf(value);
  }
  return out;
}

export function renderStreamsDoc(entries: Entry[] = documented): string {
  const parts = [
    '# Streams, subjects and buckets',
    '',
    '<!-- Generated by `npm run docs:streams` from shared/src/contracts/*.ts. Do not edit by hand. -->',
    '',
    'Every name is prefixed by the namespace (`NATS_NAMESPACE`, default `uptime`), written `<ns>` below. Names',
    'and subjects are built in one place, `shared/src/subjects.ts`. Messages are JSON; each has one zod schema',
    'in `shared/src/contracts/`, whose JSON Schema is given here: validate with it, it is written to stay valid',
    'across compatible changes.',
    '',
    '## How these contracts change',
    '',
    'Compatible changes are made without notice within a subject, and every consumer must tolerate them:',
    '',
    '- **New fields**, in any object. The published schemas leave objects open (no `additionalProperties: false`):',
    '  ignore what you do not know. A new field is published as optional, since messages written before it stay in',
    '  the streams for their retention and may be replayed.',
    '- **New values** of a listed field: event kinds (`monitor.paused` could join `monitor.down`), subject types,',
    '  error classes, ping kinds, integration types. Such fields are published as strings with the known values as',
    '  `examples`: skip a value you do not handle, do not fail on it.',
    '- **New subjects, streams and buckets** (a new event kind is also a new subject under `<ns>.events.>`).',
    '',
    'Breaking changes are removing or renaming a field, changing its type, unit or meaning, making an optional field',
    "required, narrowing what a field may hold, and changing a subject's grammar or a `Nats-Msg-Id` scheme. None is",
    'ever made in place. A breaking change gets a new version of the subject and stream, outside the old subjects',
    '(for example `<ns>.v2.results.<region>.<monitor_id>` in `<ns>_RESULTS_V2`), or a new bucket. It is announced in',
    'the release notes and in this file, and the old version keeps being published beside the new one for at least',
    'one minor release before a major release removes it. The webhook body takes additions the same way; a breaking',
    'change to it would be a new body version that each integration opts into.',
    '',
  ];
  for (const e of entries) {
    parts.push(
      `## ${e.title}`,
      '',
      e.where + '.',
      '',
      e.body,
      '',
      '```json',
      JSON.stringify(publishedSchema(e.schema), null, 2),
      '```',
      '',
    );
  }
  return parts.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const out = new URL('../../../docs/streams.md', import.meta.url);
  writeFileSync(out, renderStreamsDoc());
  process.stdout.write(`wrote ${fileURLToPath(out)}\n`);
}
