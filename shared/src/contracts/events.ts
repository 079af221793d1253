import { z } from 'zod';
import { MAX_JSON_DEPTH, tooDeepMessage, valueTooDeep } from '../json-depth.ts';

export const eventKinds = [
  'monitor.down',
  'monitor.up',
  'monitor.flapping',
  'monitor.settled',
  'monitor.regional_down',
  'monitor.regional_up',
  'monitor.degraded',
  'monitor.restored',
  'monitor.certificate_expiring',
  'monitor.domain_expiring',
  'heartbeat.down',
  'heartbeat.up',
  'heartbeat.late',
  'heartbeat.started',
  'trigger.fired',
  'region.degraded',
  'region.recovered',
  'maintenance.started',
  'maintenance.ended',
  'alert.acknowledged',
  'alert.snoozed',
  'alert.renotified',
  'alert.escalated',
  'monitor.snoozed',
  'heartbeat.snoozed',
  'integration.failing',
  'integration.recovered',
] as const;
export const EventKind = z.enum(eventKinds);

/**
 * A monitor's certificate or domain nearing its expiry: a warning, recorded only for a monitor
 * that asks for it (a non-empty list of days), sent once per threshold whatever the monitor's state.
 */
const expiryKindList: EventKind[] = ['monitor.certificate_expiring', 'monitor.domain_expiring'];
export const expiryKinds: ReadonlySet<string> = new Set(expiryKindList);

/** The kinds that notify a resource's integrations (trigger calls make their deliveries themselves). */
export const alertKinds: ReadonlySet<string> = new Set<EventKind>([
  'monitor.down',
  'monitor.up',
  'heartbeat.down',
  'heartbeat.up',
  ...expiryKindList,
]);
export type EventKind = z.infer<typeof EventKind>;

/** A monitor's regional incident opening or closing: an alert only for monitors that ask (`alert_regional`). */
export const regionalKinds: ReadonlySet<string> = new Set<EventKind>(['monitor.regional_down', 'monitor.regional_up']);

/** A monitor's degraded period opening or closing: an alert only for monitors that ask (`alert_degraded`). */
export const degradedKinds: ReadonlySet<string> = new Set<EventKind>(['monitor.degraded', 'monitor.restored']);

/**
 * A domain event, published on `<ns>.events.<project_id>.<kind>` with `Nats-Msg-Id` = `id`.
 * Written to the outbox in the same transaction as the state change it reports, so each
 * transition is published once (a republish after a crash is dropped by the server's dedupe).
 * A public contract (docs/streams.md).
 */
export const DomainEvent = z.object({
  id: z.uuid(),
  kind: EventKind,
  occurred_at: z.iso.datetime(),
  project_id: z.uuid(),
  subject: z.object({
    type: z.enum(['monitor', 'heartbeat', 'trigger', 'region', 'maintenance_window', 'integration']),
    id: z.uuid(),
    name: z.string(),
  }),
  /**
   * Kind-specific details: for monitors url, regions, cause, incident_id, duration_seconds; for
   * maintenance windows starts_at, ends_at, whole_project, monitor_ids, heartbeat_ids; for alert
   * steps (alert.*) alert_id, opened_at, by, until, count (docs/streams.md).
   * Capped in depth: the consumer stores it and hands it to integrations, and a deeper one would
   * fail there on every redelivery instead of being terminated here.
   */
  data: z.record(z.string(), z.unknown()).refine((d) => !valueTooDeep(d, MAX_JSON_DEPTH - 1), tooDeepMessage('data')),
});
export type DomainEvent = z.infer<typeof DomainEvent>;

/**
 * The `project_id` of events about the deployment itself rather than one project (a probe
 * region's health): published on `<ns>.events.00000000-0000-0000-0000-000000000000.<kind>`.
 */
export const DEPLOYMENT_PROJECT_ID = '00000000-0000-0000-0000-000000000000';
