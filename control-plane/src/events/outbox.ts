import { randomUUID } from 'node:crypto';
import { createAckPublisher } from '../../../shared/src/ack-publisher.ts';
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

/** Records many events with one statement (a batch of transitions), in the transaction of their changes. */
export async function recordEvents(tx: Db, events: readonly (Omit<DomainEvent, 'id'> & { id?: string })[]): Promise<DomainEvent[]> {
  if (events.length === 0) return [];
  const full = events.map((e) => DomainEvent.parse({ ...e, id: e.id ?? randomUUID() }));
  await tx`
    insert into outbox_events (id, project_id, kind, payload)
    select (e->>'id')::uuid, (e->>'project_id')::uuid, e->>'kind', e from jsonb_array_elements(${tx.json(full as never)}) as e`;
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
  // One reply subscription for every ack and coalesced socket writes: a burst of transitions
  // (thousands of misses in one second) is not paid for with a request and its timers per event.
  const acks = createAckPublisher(opts.nc, { budgetMs: 5_000 });
  const log = opts.log.child({ component: 'outbox' });

  const publishOne = async (e: DomainEvent) => {
    const stored = await acks.publish(opts.names.subjects.event(e.project_id, e.kind), JSON.stringify(e), e.id);
    if (!stored) throw new Error('EVENTS did not acknowledge the event within 5 s');
  };
  const publish = async (events: readonly DomainEvent[]) => {
    const done: string[] = [];
    // The events of one subject go out in order; different subjects' at once (a burst of
    // heartbeat misses would otherwise wait for one ack after another).
    const bySubject = new Map<string, DomainEvent[]>();
    for (const e of events) {
      const list = bySubject.get(e.subject.id);
      if (list) list.push(e);
      else bySubject.set(e.subject.id, [e]);
    }
    await Promise.all(
      [...bySubject.values()].map(async (list) => {
        for (const e of list) {
          try {
            await publishOne(e);
            done.push(e.id);
          } catch (err) {
            log.warn({ err, eventId: e.id }, 'event not published yet; the relay will retry');
          }
        }
      }),
    );
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
  return {
    publish,
    relay,
    stop: () => {
      clearInterval(timer);
      void acks.close();
    },
  };
}
