import { DeliverPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { durableConsumer } from '../platform/nats/durable.ts';
import { alertKinds, DomainEvent } from '../../../shared/src/contracts/events.ts';
import type { IntegrationType } from '../../../shared/src/contracts/notify.ts';
import type { Sql } from '../platform/db/sql.ts';
import { notificationFromEvent } from './content.ts';
import { enqueue, type QueueDeps } from './queue.ts';
import { insertDeliveries, markNotified, projectNames, recipientsOf, unnotifiedEvents } from './repo.ts';

export const EVENTS_CONSUMER = 'notify';

/** Events handled in one transaction at most. */
const MAX_BATCH = 100;

/** A durable created for the first time replays this much of EVENTS, not its whole 30 days. */
const FIRST_START_LOOKBACK_MS = 60 * 60_000;

type Job = { id: string; event_id: string; integration_id: string; type: IntegrationType };

/**
 * Turns monitor and heartbeat events into their deliveries, in one transaction, and marks the
 * events notified. The unique (event, integration) pair makes a replayed event a no-op, whoever
 * replays it (the consumer, a second notify process, the event relay). Returns what to queue.
 */
export async function deliveriesForEvents(sql: Sql, events: readonly DomainEvent[]): Promise<Job[]> {
  const unique = [...new Map(events.map((e) => [e.id, e])).values()];
  if (unique.length === 0) return [];
  return sql.begin(async (tx) => {
    await markNotified(
      tx,
      unique.map((e) => e.id),
    );
    const names = await projectNames(tx, [...new Set(unique.map((e) => e.project_id))]);
    const live = unique.filter((e) => names.has(e.project_id));
    const recipients = await recipientsOf(tx, live);
    const byId = new Map(live.map((e) => [e.id, e]));
    const inserted = await insertDeliveries(
      tx,
      recipients.map((r) => {
        const e = byId.get(r.event_id)!;
        return {
          event_id: e.id,
          integration_id: r.id,
          project_id: e.project_id,
          trigger_id: null,
          kind: e.kind,
          payload: notificationFromEvent(e, { id: e.project_id, name: names.get(e.project_id)! }),
        };
      }),
    );
    const typeOf = new Map<string, IntegrationType>(recipients.map((r) => [r.id, r.type]));
    return inserted.map((d) => ({ id: d.id, event_id: d.event_id, integration_id: d.integration_id, type: typeOf.get(d.integration_id)! }));
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
      await markNotified(deps.sql, [row.id]);
      continue;
    }
    const jobs = await deliveriesForEvents(deps.sql, [parsed.data]);
    if (jobs.length > 0)
      deps.log.warn(
        { eventId: row.id, kind: parsed.data.kind, deliveries: jobs.length },
        'event dispatched by the relay: EVENTS did not bring it in time',
      );
    await enqueue(deps, jobs);
  }
  return rows.length;
}

/**
 * The notify role's reader of EVENTS: a durable consumer shared by every notify process. An
 * event is acknowledged after its deliveries are committed; their NOTIFY messages follow.
 */
export async function startEventsConsumer(
  deps: QueueDeps & { now: () => Date },
): Promise<{ stats(): { batches: number }; stop(): Promise<void> }> {
  const log = deps.log.child({ component: 'notify-events' });
  const consumer = await durableConsumer(deps.nc, deps.names.streams.events, {
    durable_name: EVENTS_CONSUMER,
    deliver_policy: DeliverPolicy.StartTime,
    opt_start_time: new Date(deps.now().getTime() - FIRST_START_LOOKBACK_MS).toISOString(),
    ack_wait: nanos(30_000),
    max_ack_pending: 1_000,
  });

  // Messages are taken as they arrive and handled in batches, one transaction each: a burst of
  // transitions (thousands of misses in a second) costs a few transactions, not one per event.
  const pending: JsMsg[] = [];
  let draining: Promise<void> | undefined;
  const drain = (): Promise<void> =>
    (draining ??= (async () => {
      while (pending.length > 0) {
        await handle(pending.splice(0, MAX_BATCH)).catch((err: unknown) => {
          // After the commit and the acks: the deliveries are stored, and the relay queues them.
          log.warn({ err }, 'deliveries not queued yet; the relay will queue them');
        });
      }
    })().finally(() => {
      draining = undefined;
      // A message taken after the last look at the queue.
      if (pending.length > 0) void drain();
    }));

  const handle = async (msgs: JsMsg[]) => {
    const alerts: { msg: JsMsg; event: DomainEvent }[] = [];
    for (const msg of msgs) {
      let event: DomainEvent;
      try {
        event = DomainEvent.parse(msg.json());
      } catch {
        log.warn({ subject: msg.subject, seq: msg.seq }, 'invalid event terminated');
        msg.term();
        continue;
      }
      if (alertKinds.has(event.kind)) alerts.push({ msg, event });
      else msg.ack();
    }
    if (alerts.length === 0) return;
    let jobs: Job[];
    try {
      jobs = await deliveriesForEvents(
        deps.sql,
        alerts.map((a) => a.event),
      );
    } catch (err) {
      if (alerts.length > 1) {
        // Usually the database is away; but one event that cannot be dispatched must not hold back the others.
        for (const a of alerts) await handle([a.msg]);
        return;
      }
      log.error({ err, eventId: alerts[0]!.event.id }, 'event not dispatched; redelivering later');
      alerts[0]!.msg.nak(5_000);
      return;
    }
    for (const a of alerts) a.msg.ack();
    batches++;
    if (jobs.length > 0) log.info({ events: alerts.length, deliveries: jobs.length }, 'events dispatched');
    await enqueue(deps, jobs);
  };
  let batches = 0;

  let stopped = false;
  // The pull in progress, ended by stop() so that stopping does not wait out its expiry.
  let pulling: ConsumerMessages | undefined;
  const loop = (async () => {
    while (!stopped) {
      try {
        const iter = await consumer.fetch({ max_messages: 100, expires: 1_000 });
        pulling = iter;
        for await (const m of iter) {
          pending.push(m);
          void drain();
        }
      } catch (err) {
        if (stopped) break;
        log.warn({ err }, 'fetching events failed; retrying');
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  })();

  return {
    stats: () => ({ batches }),
    async stop() {
      stopped = true;
      pulling?.stop();
      await loop;
      // What was taken is handled before stopping, so none of it waits out its ack time.
      await drain();
    },
  };
}
