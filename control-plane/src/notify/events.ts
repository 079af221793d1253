import { DeliverPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { durableConsumer } from '../nats/durable.ts';
import { alertKinds, DomainEvent } from '../../../shared/src/contracts/events.ts';
import type { IntegrationType } from '../../../shared/src/contracts/notify.ts';
import type { Sql } from '../db/sql.ts';
import { notificationFromEvent } from './content.ts';
import { enqueue, type QueueDeps } from './queue.ts';
import { insertDeliveries, markNotified, projectName, recipientsOf, unnotifiedEvents } from './repo.ts';

export const EVENTS_CONSUMER = 'notify';

/** A durable created for the first time replays this much of EVENTS, not its whole 30 days. */
const FIRST_START_LOOKBACK_MS = 60 * 60_000;

/**
 * Turns one monitor or heartbeat event into its deliveries, in one transaction, and marks the
 * event notified. The unique (event, integration) pair makes a replayed event a no-op, whoever
 * replays it (the consumer, a second notify process, the event relay). Returns what to queue.
 */
export async function deliveriesForEvent(sql: Sql, e: DomainEvent) {
  return sql.begin(async (tx) => {
    await markNotified(tx, e.id);
    const name = await projectName(tx, e.project_id);
    if (name === undefined) return [];
    const recipients = await recipientsOf(tx, e.project_id, e.subject);
    const payload = notificationFromEvent(e, { id: e.project_id, name });
    const inserted = await insertDeliveries(
      tx,
      recipients.map((r) => ({ event_id: e.id, integration_id: r.id, project_id: e.project_id, trigger_id: null, kind: e.kind, payload })),
    );
    const typeOf = new Map<string, IntegrationType>(recipients.map((r) => [r.id, r.type]));
    return inserted.map((d) => ({ id: d.id, integration_id: d.integration_id, type: typeOf.get(d.integration_id)! }));
  });
}

/**
 * The safety net under the consumer: alert events published `lostAfterMs` ago or earlier (and
 * within the last day) whose deliveries were never made, dispatched from the outbox table. A
 * JetStream consumer has been seen to skip a stored message after a cluster node died; without
 * this, that event's notifications would be lost. Returns how many events it dispatched.
 */
export async function relayEvents(deps: QueueDeps, lostAfterMs: number): Promise<number> {
  const rows = await unnotifiedEvents(deps.sql, lostAfterMs);
  for (const row of rows) {
    const parsed = DomainEvent.safeParse(row.payload);
    if (!parsed.success) {
      // No consumer could read it either: marked, so that the relay does not read it again.
      deps.log.warn({ eventId: row.id }, 'invalid event in the outbox left without deliveries');
      await markNotified(deps.sql, row.id);
      continue;
    }
    const jobs = await deliveriesForEvent(deps.sql, parsed.data);
    if (jobs.length > 0) deps.log.warn({ eventId: row.id, kind: parsed.data.kind, deliveries: jobs.length }, 'event dispatched by the relay: EVENTS did not bring it in time');
    await enqueue(deps, jobs);
  }
  return rows.length;
}

/**
 * The notify role's reader of EVENTS: a durable consumer shared by every notify process. An
 * event is acknowledged after its deliveries are committed; their NOTIFY messages follow.
 */
export async function startEventsConsumer(deps: QueueDeps & { now: () => Date }): Promise<{ stop(): Promise<void> }> {
  const log = deps.log.child({ component: 'notify-events' });
  const consumer = await durableConsumer(deps.nc, deps.names.streams.events, {
    durable_name: EVENTS_CONSUMER,
    deliver_policy: DeliverPolicy.StartTime,
    opt_start_time: new Date(deps.now().getTime() - FIRST_START_LOOKBACK_MS).toISOString(),
    ack_wait: nanos(30_000),
    max_ack_pending: 1_000,
  });

  const handle = async (msg: JsMsg) => {
    let event: DomainEvent;
    try {
      event = DomainEvent.parse(msg.json());
    } catch {
      log.warn({ subject: msg.subject, seq: msg.seq }, 'invalid event terminated');
      msg.term();
      return;
    }
    if (!alertKinds.has(event.kind)) {
      msg.ack();
      return;
    }
    try {
      const jobs = await deliveriesForEvent(deps.sql, event);
      msg.ack();
      if (jobs.length > 0) log.info({ eventId: event.id, kind: event.kind, deliveries: jobs.length }, 'event dispatched');
      await enqueue(deps, jobs);
    } catch (err) {
      log.error({ err, eventId: event.id }, 'event not dispatched; redelivering later');
      msg.nak(5_000);
    }
  };

  let stopped = false;
  // The pull in progress, ended by stop() so that stopping does not wait out its expiry.
  let pulling: ConsumerMessages | undefined;
  const loop = (async () => {
    while (!stopped) {
      try {
        const iter = await consumer.fetch({ max_messages: 100, expires: 1_000 });
        pulling = iter;
        for await (const m of iter) await handle(m);
      } catch (err) {
        if (stopped) break;
        log.warn({ err }, 'fetching events failed; retrying');
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  })();

  return {
    async stop() {
      stopped = true;
      pulling?.stop();
      await loop;
    },
  };
}
