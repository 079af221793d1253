import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { together } from '../../control-plane/src/platform/db/sql.ts';
import {
  createOutboxPublisher,
  eventsInsert,
  recordEvent,
  unpublishedBacklog,
  type OutboxPublisher,
} from '../../control-plane/src/platform/outbox.ts';
import type { DomainEvent } from '../../shared/src/contracts/events.ts';
import { ensureStreams } from '../../shared/src/provision.ts';
import { createTestDatabase, quietLog, type TestDatabase } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { createTestNats, type TestNats } from '../harness/nats.ts';
import { readStream } from '../harness/streams.ts';

describe('the event outbox', () => {
  let db: TestDatabase;
  let nats: TestNats;
  let ada: TestAccount;
  let outbox: OutboxPublisher;

  before(async () => {
    db = await createTestDatabase();
    nats = await createTestNats();
    await ensureStreams(nats.nc, nats.names, { replicas: 1 });
    ada = await createAccount(db.sql);
    // No timer-driven relay during the test: it runs when the test calls it.
    outbox = createOutboxPublisher({ sql: db.sql, nc: nats.nc, names: nats.names, log: quietLog, relayEveryMs: 3_600_000 });
  });
  after(async () => {
    outbox.stop();
    await nats.close();
    await db.drop();
  });

  const event = (subjectId: string, n: number): Omit<DomainEvent, 'id'> => ({
    kind: n % 2 === 0 ? 'heartbeat.down' : 'heartbeat.up',
    occurred_at: new Date(Date.UTC(2026, 10, 21, 12, 0, 0, n)).toISOString(),
    project_id: ada.project_id,
    subject: { type: 'heartbeat', id: subjectId, name: `job ${n}` },
    data: { n },
  });
  /** Records events in a transaction of their own, as a batch writer does. */
  const record = (events: Omit<DomainEvent, 'id'>[]) =>
    db.sql.begin(async (tx) => {
      const { events: full, statements } = eventsInsert(tx, events);
      await together(tx, statements);
      return full;
    });
  const unpublished = async (ids: string[]) =>
    (await db.sql<{ id: string }[]>`select id from outbox_unpublished where id = any(${ids}::uuid[])`).map((r) => r.id);
  const onStream = async (ids: string[]) => {
    const wanted = new Set(ids);
    return (await readStream(nats.nc, nats.names.streams.events)).filter((m) => wanted.has(m.msgId ?? ''));
  };

  it('publishes batches at once and marks every event of every batch published', async () => {
    const batches = await Promise.all(
      Array.from({ length: 8 }, () => {
        const subject = randomUUID();
        return record(Array.from({ length: 50 }, (_, n) => event(subject, n)));
      }),
    );
    await Promise.all(batches.map((b) => outbox.publish(b)));
    const ids = batches.flat().map((e) => e.id);
    assert.deepEqual(await unpublished(ids), []);
    const messages = await onStream(ids);
    assert.equal(messages.length, ids.length);
    // One subject's events in the order they were raised.
    for (const batch of batches) {
      const subject = batch[0]!.subject.id;
      assert.deepEqual(
        messages.filter((m) => m.data.subject.id === subject).map((m) => m.data.data.n),
        batch.map((e) => e.data.n),
      );
    }
    // As recorded: the payload of the row is the message.
    const [row] = await db.sql<{ payload: DomainEvent }[]>`select payload from outbox_events where id = ${ids[0]!}`;
    assert.deepEqual(messages.find((m) => m.msgId === ids[0])!.data, row!.payload);
  });

  it('leaves what a crash left unpublished to the relay, which publishes and marks it once', async () => {
    const left = await record(Array.from({ length: 30 }, (_, n) => event(randomUUID(), n)));
    assert.deepEqual((await unpublished(left.map((e) => e.id))).length, 30);
    // The relay takes the oldest unpublished rows; earlier tests' rows are all marked.
    assert.equal(await outbox.relay(), 30);
    assert.deepEqual(await unpublished(left.map((e) => e.id)), []);
    assert.equal((await onStream(left.map((e) => e.id))).length, 30);
    assert.equal(await outbox.relay(), 0);
  });

  it('publishes an event once however often it is published again (the stream drops the copy)', async () => {
    const batch = await record([event(randomUUID(), 1), event(randomUUID(), 2)]);
    await outbox.publish(batch);
    await Promise.all([outbox.publish(batch), outbox.publish(batch)]);
    await db.sql`insert into outbox_unpublished (id) values (${batch[0]!.id})`;
    await outbox.relay();
    assert.equal((await onStream(batch.map((e) => e.id))).length, 2);
    assert.deepEqual(await unpublished(batch.map((e) => e.id)), []);
  });

  it('queues an event recorded on its own (recordEvent) with its row, in its transaction', async () => {
    const kept = await db.sql.begin((tx) => recordEvent(tx, { ...event(randomUUID(), 3), kind: 'heartbeat.started' }));
    await assert.rejects(
      db.sql.begin(async (tx) => {
        await recordEvent(tx, event(randomUUID(), 4));
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    assert.deepEqual(await unpublished([kept.id]), [kept.id]);
    const [queued] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from outbox_unpublished u where not exists (select 1 from outbox_events o where o.id = u.id)`;
    assert.equal(queued!.n, 0, 'nothing queued for the rolled back event');
    assert.equal(await outbox.relay(), 1);
    assert.deepEqual(await unpublished([kept.id]), []);
  });

  // A marking that waited for the router's locks would wait for ever here: the timeout fails it.
  it('never locks the event rows it publishes: a router holding them does not hold back the marks', { timeout: 10_000 }, async () => {
    const batch = await record([event(randomUUID(), 0), event(randomUUID(), 2)]);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let claimed!: () => void;
    const holding = new Promise<void>((r) => (claimed = r));
    // As the notify router claims alerts: FOR UPDATE, until its transaction ends.
    const router = db.sql.begin(async (tx) => {
      await tx`select id from outbox_events where id = any(${batch.map((e) => e.id)}::uuid[]) for update`;
      claimed();
      await held;
    });
    await holding;
    await outbox.publish(batch);
    assert.deepEqual(await unpublished(batch.map((e) => e.id)), [], 'marked while the rows were held');
    release();
    await router;
  });

  it('drops a queued event whose row is gone, publishing nothing for it', async () => {
    const [lost] = await record([event(randomUUID(), 0)]);
    await db.sql`delete from outbox_events where id = ${lost!.id}`;
    assert.equal(await outbox.relay(), 1);
    assert.deepEqual(await unpublished([lost!.id]), []);
    assert.equal((await onStream([lost!.id])).length, 0);
  });

  it('tells how many events wait to be published and how long the oldest has waited', async () => {
    assert.deepEqual(await unpublishedBacklog(db.sql), { count: 0, oldestSeconds: 0 });
    const waiting = await record([event(randomUUID(), 0), event(randomUUID(), 1)]);
    // One of them recorded 90 s ago, as when EVENTS has not taken anything for that long.
    await db.sql`update outbox_unpublished set created_at = now() - interval '90 seconds' where id = ${waiting[0]!.id}`;
    const backlog = await unpublishedBacklog(db.sql);
    assert.equal(backlog.count, 2);
    assert.ok(backlog.oldestSeconds >= 90 && backlog.oldestSeconds < 120, String(backlog.oldestSeconds));
    assert.equal(await outbox.relay(), 2);
    assert.deepEqual(await unpublishedBacklog(db.sql), { count: 0, oldestSeconds: 0 });
  });
});
