import { randomUUID } from 'node:crypto';
import { createAckPublisher } from '../../../shared/src/ack-publisher.ts';
import { alertKinds, DomainEvent } from '../../../shared/src/contracts/events.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import type { NatsConnection } from '../../../shared/src/nats.ts';
import type { Names } from '../../../shared/src/subjects.ts';
import { arrayLiteral, type Db, type Sql, type Statement } from './db/sql.ts';

/**
 * Records an event in the same transaction as the state change it reports. An alert (one the
 * notify role routes: the alert kinds, or one the caller says is, such as a regional incident of
 * a monitor that asks for them) waits for its deliveries; any other is marked notified at once.
 */
export async function recordEvent(
  tx: Db,
  event: Omit<DomainEvent, 'id'> & { id?: string },
  opts: { alert?: boolean } = {},
): Promise<DomainEvent> {
  const full = DomainEvent.parse({ ...event, id: event.id ?? randomUUID() });
  const alert = opts.alert ?? alertKinds.has(full.kind);
  await tx`
    with e as (
      insert into outbox_events (id, project_id, kind, payload, notified_at)
      values (${full.id}, ${full.project_id}, ${full.kind}, ${tx.json(full as never)}, case when ${alert} then null else now() end)
      returning id)
    insert into outbox_unpublished (id) select id from e`;
  return full;
}

/**
 * The statements that record many events (a batch of transitions) and queue them for the
 * publisher, to run in the transaction of their changes (with its other writes, see `together`),
 * and the events with their ids. The batch writers build their events from typed state
 * (heartbeats/events.ts); they are not parsed again here, which a burst of thousands of misses
 * would pay for per event. Consumers of EVENTS parse what they read (notify/events.ts).
 */
export function eventsInsert(
  tx: Db,
  events: readonly (Omit<DomainEvent, 'id'> & { id?: string })[],
): { events: DomainEvent[]; statements: Statement[] } {
  const full: DomainEvent[] = events.map((e) => ({ ...e, id: e.id ?? randomUUID() }));
  const texts = full.map((e) => {
    const text = JSON.stringify(e);
    serialized.set(e, text);
    return text;
  });
  // Sent as text: a parameter typed jsonb would be serialized (quoted) once more by the driver.
  const statement = tx`
    insert into outbox_events (id, project_id, kind, payload, notified_at)
    select (e->>'id')::uuid, (e->>'project_id')::uuid, e->>'kind', e, case when e->>'kind' = any(${alertKindList}::text[]) then null else now() end
    from jsonb_array_elements(${`[${texts.join(',')}]`}::text::jsonb) as e`;
  const queued = tx`insert into outbox_unpublished (id) select unnest(${arrayLiteral(full.map((e) => e.id))}::uuid[])`;
  return { events: full, statements: [statement, queued] };
}

// An alert event waits for its deliveries (notified_at null, see notify/events.ts); the others do not.
const alertKindList = arrayLiteral([...alertKinds]);

/** The JSON text an event was recorded with, reused when it is published right after. */
const serialized = new WeakMap<DomainEvent, string>();

export interface OutboxPublisher {
  /** Publishes these events now (after their transaction committed). */
  publish(events: readonly DomainEvent[]): Promise<void>;
  /** Publishes whatever an earlier crash left unpublished. */
  relay(): Promise<number>;
  stop(): void;
}

/**
 * Publishes outbox rows on EVENTS with `Nats-Msg-Id` = event id, then takes them off the queue of
 * unpublished events (outbox_unpublished, ADR 0043). A crash between the two republishes the event
 * later; the stream's duplicate window drops it.
 */
export function createOutboxPublisher(opts: {
  sql: Sql;
  nc: NatsConnection;
  names: Names;
  log: Logger;
  relayEveryMs?: number;
}): OutboxPublisher {
  // One reply subscription for every ack and coalesced socket writes: a burst of transitions
  // (thousands of misses in one second) is not paid for with a request and its timers per event.
  const acks = createAckPublisher(opts.nc, { budgetMs: 5_000 });
  const log = opts.log.child({ component: 'outbox' });

  // Published ids are marked by one statement at a time; the ids of batches published while it
  // runs wait and go together in the next one, so a burst costs a few marking statements, not one
  // per batch. A caller's promise settles with the statement that carried its ids.
  let chain: Promise<void> = Promise.resolve();
  type Marking = { ids: string[]; callers: { resolve: () => void; reject: (err: unknown) => void }[] };
  let next: Marking | null = null;
  const markPublished = (ids: readonly string[]) =>
    new Promise<void>((resolve, reject) => {
      if (!next) {
        const batch: Marking = (next = { ids: [], callers: [] });
        chain = chain.then(async () => {
          next = null;
          try {
            await opts.sql`delete from outbox_unpublished where id = any(${arrayLiteral(batch.ids)}::uuid[])`;
            for (const c of batch.callers) c.resolve();
          } catch (err) {
            for (const c of batch.callers) c.reject(err);
          }
        });
      }
      for (const id of ids) next.ids.push(id);
      next.callers.push({ resolve, reject });
    });

  const publish = async (events: readonly DomainEvent[]) => {
    const done: string[] = [];
    const one = (e: DomainEvent): Promise<void> =>
      acks.publish(opts.names.subjects.event(e.project_id, e.kind), serialized.get(e) ?? JSON.stringify(e), e.id).then((stored) => {
        if (stored) done.push(e.id);
        else log.warn({ eventId: e.id }, 'EVENTS did not acknowledge the event within 5 s; the relay will retry');
      });
    // The events of one subject go out in order; different subjects' at once (a burst of
    // heartbeat misses would otherwise wait for one ack after another).
    const bySubject = new Map<string, DomainEvent[]>();
    for (const e of events) {
      const list = bySubject.get(e.subject.id);
      if (list) list.push(e);
      else bySubject.set(e.subject.id, [e]);
    }
    const inOrder = async (list: DomainEvent[]) => {
      for (const e of list) await one(e);
    };
    await Promise.all([...bySubject.values()].map((list) => (list.length === 1 ? one(list[0]!) : inOrder(list))));
    if (done.length > 0) await markPublished(done);
  };
  const relay = async () => {
    const rows = await opts.sql<{ id: string; payload: DomainEvent | null }[]>`
      select u.id, o.payload from outbox_unpublished u left join outbox_events o on o.id = u.id
      order by u.created_at limit 500`;
    // A queued event whose row is gone (deleted by hand) has nothing left to publish.
    const gone = rows.flatMap((r) => (r.payload === null ? [r.id] : []));
    if (gone.length > 0) await markPublished(gone);
    await publish(rows.flatMap((r) => (r.payload === null ? [] : [r.payload])));
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

/**
 * The events recorded and not yet known to be on EVENTS, in all processes, and how long the
 * oldest has waited (0 when none): a few in flight are normal, an old one means EVENTS does not
 * take them (`uptime_outbox_unpublished`, `uptime_outbox_oldest_unpublished_seconds`).
 */
export async function unpublishedBacklog(sql: Sql): Promise<{ count: number; oldestSeconds: number }> {
  const [row] = await sql<{ count: number; oldest: number }[]>`
    select count(*)::int as count, coalesce(extract(epoch from now() - min(created_at)), 0)::float8 as oldest from outbox_unpublished`;
  return { count: row!.count, oldestSeconds: Math.max(0, row!.oldest) };
}

/**
 * Deletes up to `limit` events recorded before `cutoff` that are published and routed (retention):
 * never one the outbox still has to publish, nor an alert still waiting for its deliveries.
 */
export async function prunePublishedEvents(sql: Sql, cutoff: string, limit: number): Promise<number> {
  const { count } = await sql`
    delete from outbox_events where ctid = any(array(
      select o.ctid from outbox_events o
      where o.created_at < ${cutoff} and o.notified_at is not null
        and not exists (select 1 from outbox_unpublished u where u.id = o.id)
      limit ${limit}))`;
  return count;
}
