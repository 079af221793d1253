import { randomUUID } from 'node:crypto';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { DomainEvent } from '../../../shared/src/contracts/events.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import type { NatsConnection } from '../../../shared/src/nats.ts';
import type { Names } from '../../../shared/src/subjects.ts';
import type { Db, Sql } from '../db/sql.ts';

/** Records an event in the same transaction as the state change it reports. */
export async function recordEvent(tx: Db, event: Omit<DomainEvent, 'id'> & { id?: string }): Promise<DomainEvent> {
  const full = DomainEvent.parse({ ...event, id: event.id ?? randomUUID() });
  await tx`
    insert into outbox_events (id, project_id, kind, payload)
    values (${full.id}, ${full.project_id}, ${full.kind}, ${tx.json(full as never)})`;
  return full;
}

export interface OutboxPublisher {
  /** Publishes these events now (after their transaction committed). */
  publish(events: readonly DomainEvent[]): Promise<void>;
  /** Publishes whatever an earlier crash left unpublished. */
  relay(): Promise<number>;
  stop(): void;
}

/**
 * Publishes outbox rows on EVENTS with `Nats-Msg-Id` = event id, then marks them published. A
 * crash between the two republishes the event later; the stream's duplicate window drops it.
 */
export function createOutboxPublisher(opts: { sql: Sql; nc: NatsConnection; names: Names; log: Logger; relayEveryMs?: number }): OutboxPublisher {
  const js: JetStreamClient = jetstream(opts.nc);
  const log = opts.log.child({ component: 'outbox' });

  const publishOne = async (e: DomainEvent) => {
    await js.publish(opts.names.subjects.event(e.project_id, e.kind), JSON.stringify(e), { msgID: e.id, timeout: 5_000 });
  };
  const publish = async (events: readonly DomainEvent[]) => {
    const done: string[] = [];
    for (const e of events) {
      try {
        await publishOne(e);
        done.push(e.id);
      } catch (err) {
        log.warn({ err, eventId: e.id }, 'event not published yet; the relay will retry');
      }
    }
    if (done.length > 0) await opts.sql`update outbox_events set published_at = now() where id = any(${opts.sql.array(done)}::uuid[])`;
  };
  const relay = async () => {
    const rows = await opts.sql<{ payload: DomainEvent }[]>`
      select payload from outbox_events where published_at is null order by created_at limit 500`;
    await publish(rows.map((r) => r.payload));
    return rows.length;
  };
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    relay()
      .catch((err: unknown) => log.warn({ err }, 'outbox relay failed'))
      .finally(() => (running = false));
  }, opts.relayEveryMs ?? 5_000);
  timer.unref();
  return { publish, relay, stop: () => clearInterval(timer) };
}
