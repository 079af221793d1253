import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startRetention } from '../../control-plane/src/runtime/retention.ts';
import { createTestDatabase, quietLog, type TestDatabase } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

const DAY = 86_400_000;
const now = new Date('2026-11-21T12:00:00Z');
const daysAgo = (d: number) => new Date(now.getTime() - d * DAY).toISOString();
const idOf = async (rows: Promise<readonly { id?: unknown }[]>) => String((await rows)[0]!.id);

describe('retention of history', () => {
  let db: TestDatabase;
  let ada: TestAccount;
  let integrationId: string;
  let triggerId: string;

  before(async () => {
    db = await createTestDatabase();
    ada = await createAccount(db.sql);
    integrationId = await idOf(
      db.sql`insert into integrations (project_id, name, type) values (${ada.project_id}, 'hook', 'webhook') returning id`,
    );
    triggerId = await idOf(
      db.sql`insert into triggers (project_id, name, default_message) values (${ada.project_id}, 't', 'x') returning id`,
    );
  });
  after(() => db.drop());

  const retention = () => startRetention({ sql: db.sql, log: quietLog, days: { results: 30, history: 90 }, now: () => now });

  it('deletes results past RESULTS_RETENTION_DAYS and history past HISTORY_RETENTION_DAYS, nothing younger', async () => {
    const monitorId = randomUUID();
    for (const age of [29, 31, 89, 91]) {
      await db.sql`
        insert into check_results (monitor_id, scheduled_at, region, checked_at, agent_id, ok, dns_ms, connect_ms, tls_ms, ttfb_ms, total_ms, attempts)
        values (${monitorId}, ${daysAgo(age)}, 'local', ${daysAgo(age)}, 'a', true, 1, 1, 1, 1, 4, 1)`;
      await db.sql`
        insert into outbox_events (project_id, kind, payload, created_at, notified_at)
        values (${ada.project_id}, 'heartbeat.down', ${db.sql.json({ age })}, ${daysAgo(age)}, ${daysAgo(age)})`;
      await db.sql`
        insert into deliveries (event_id, integration_id, project_id, kind, payload, status, created_at)
        values (${randomUUID()}, ${integrationId}, ${ada.project_id}, 'heartbeat.down', ${db.sql.json({ age })}, 'delivered', ${daysAgo(age)})`;
      await db.sql`
        insert into trigger_events (trigger_id, message, outcome, integrations, fired_at)
        values (${triggerId}, ${String(age)}, 'dispatched', 1, ${daysAgo(age)})`;
      // A held alert settled that long ago, and one still held (never deleted, whatever its age).
      for (const status of ['released', 'held']) {
        await db.sql`
          insert into held_alerts (event_id, project_id, subject_type, subject_id, kind, payload, occurred_at, release_at, status,
            created_at, decided_at)
          values (${randomUUID()}, ${ada.project_id}, 'heartbeat', ${randomUUID()}, 'heartbeat.down', '{}', ${daysAgo(age)},
            ${daysAgo(age)}, ${status}, ${daysAgo(age)}, ${status === 'held' ? null : daysAgo(age)})`;
      }
      await db.sql`
        insert into status_page_outages (key, project_id, subject_type, subject_id, started_at, created_at)
        values (${`monitor:${randomUUID()}`}, ${ada.project_id}, 'monitor', ${randomUUID()}, ${daysAgo(age)}, ${daysAgo(age)})`;
    }
    const deleted = await retention().run();
    assert.deepEqual(deleted, {
      'check results': 3,
      'published events': 1,
      'finished deliveries': 1,
      'settled held alerts': 1,
      'trigger calls': 1,
      'expiry warnings of expired certificates and domains': 0,
      'outages seen by the status page drafter': 1,
      'status page subscriptions never confirmed': 0,
      'status page notices sent': 0,
    });
    const held = await db.sql<{ status: string; age: number }[]>`
      select status, round(extract(epoch from (${now} - created_at)) / 86400)::int as age from held_alerts order by status, age`;
    assert.deepEqual(
      held.map((h) => `${h.status} ${h.age}`),
      ['held 29', 'held 31', 'held 89', 'held 91', 'released 29', 'released 31', 'released 89'],
    );
    const ages = async (table: string, column: string) =>
      (
        await db.sql<
          { age: number }[]
        >`select round(extract(epoch from (${now} - ${db.sql(column)})) / 86400)::int as age from ${db.sql(table)} order by 1`
      ).map((r) => r.age);
    assert.deepEqual(await ages('check_results', 'scheduled_at'), [29]);
    assert.deepEqual(await ages('outbox_events', 'created_at'), [29, 31, 89]);
    assert.deepEqual(await ages('deliveries', 'created_at'), [29, 31, 89]);
    assert.deepEqual(await ages('trigger_events', 'fired_at'), [29, 31, 89]);
  });

  it('never deletes an event the outbox has not published, an alert still waiting for its deliveries, nor a delivery still to be sent', async () => {
    const eventId = await idOf(db.sql`
      insert into outbox_events (project_id, kind, payload, created_at, notified_at)
      values (${ada.project_id}, 'heartbeat.up', '{}', ${daysAgo(400)}, ${daysAgo(400)}) returning id`);
    // Still queued for the publisher (outbox_unpublished), as a crash before its publication leaves it.
    await db.sql`insert into outbox_unpublished (id, created_at) values (${eventId}, ${daysAgo(400)})`;
    const unrouted = await idOf(db.sql`
      insert into outbox_events (project_id, kind, payload, created_at)
      values (${ada.project_id}, 'heartbeat.up', '{}', ${daysAgo(400)}) returning id`);
    const pending: string[] = [];
    for (const status of ['pending', 'sending']) {
      pending.push(
        await idOf(db.sql`
          insert into deliveries (event_id, integration_id, project_id, kind, payload, status, created_at)
          values (${randomUUID()}, ${integrationId}, ${ada.project_id}, 'heartbeat.up', '{}', ${status}, ${daysAgo(400)}) returning id`),
      );
    }
    const dead = await idOf(db.sql`
      insert into deliveries (event_id, integration_id, project_id, kind, payload, status, created_at)
      values (${randomUUID()}, ${integrationId}, ${ada.project_id}, 'heartbeat.up', '{}', 'dead', ${daysAgo(400)}) returning id`);
    const deleted = await retention().run();
    assert.equal(deleted['published events'], 0);
    assert.equal(deleted['finished deliveries'], 1);
    assert.equal(deleted['expiry warnings of expired certificates and domains'], 0);
    assert.equal((await db.sql`select 1 from outbox_events where id = ${eventId}`).length, 1);
    assert.equal((await db.sql`select 1 from outbox_events where id = ${unrouted}`).length, 1);
    assert.deepEqual(
      (await db.sql<{ id: string }[]>`select id from deliveries where id = any(${pending}::uuid[]) order by id`).map((r) => r.id),
      pending.sort(),
    );
    assert.equal((await db.sql`select 1 from deliveries where id = ${dead}`).length, 0);
  });

  it('deletes an expiry warning once its threshold and the retention have passed, not before', async () => {
    const monitorId = await idOf(db.sql`
      insert into monitors (project_id, name, url, valid_http_codes) values (${ada.project_id}, 'Shop', 'https://shop.example', '{200}') returning id`);
    // Warned at 30 days left 100 days ago: expired 70 days ago, kept for 90 more. Warned at 1
    // day left 95 days ago: expired 94 days ago, past the 90 days.
    for (const [threshold, age] of [
      [30, 100],
      [1, 95],
      [1, 80],
    ] as const) {
      await db.sql`
        insert into expiry_warnings (monitor_id, kind, subject, threshold_days, warned_at)
        values (${monitorId}, 'certificate', ${`AA:${threshold}:${age}`}, ${threshold}, ${daysAgo(age)})`;
    }
    const deleted = await retention().run();
    assert.equal(deleted['expiry warnings of expired certificates and domains'], 1);
    const left = await db.sql<{ subject: string }[]>`select subject from expiry_warnings where monitor_id = ${monitorId} order by subject`;
    assert.deepEqual(
      left.map((r) => r.subject),
      ['AA:1:80', 'AA:30:100'],
    );
  });

  it('forgets subscriptions never confirmed after a week, and notices once sent and past the history', async () => {
    const pageId = await idOf(db.sql`
      insert into status_pages (project_id, slug, title) values (${ada.project_id}, ${randomUUID().replace(/-/g, '').slice(0, 22)}, 'Acme')
      returning id`);
    const subscriber = async (email: string, age: number, confirmed: boolean) =>
      idOf(db.sql`
        insert into status_page_subscribers (status_page_id, kind, email, confirmed_at, created_at)
        values (${pageId}, 'email', ${email}, ${confirmed ? daysAgo(age) : null}, ${daysAgo(age)}) returning id`);
    await subscriber('waited-8-days@example.com', 8, false);
    await subscriber('waited-6-days@example.com', 6, false);
    const confirmed = await subscriber('confirmed-long-ago@example.com', 400, true);
    const notice = async (key: string, age: number, fanned: boolean) =>
      idOf(db.sql`
        insert into status_page_notices (status_page_id, source_key, kind, payload, created_at, fanned_out_at)
        values (${pageId}, ${key}, 'incident', '{}', ${daysAgo(age)}, ${fanned ? daysAgo(age) : null}) returning id`);
    const old = await notice('old-sent', 100, true);
    const stuck = await notice('old-still-sending', 100, true);
    await notice('old-not-fanned-out', 100, false);
    await notice('young', 10, true);
    for (const [n, status] of [
      [old, 'delivered'],
      [stuck, 'pending'],
    ] as const)
      await db.sql`
        insert into subscriber_deliveries (subscriber_id, notice_id, purpose, dedupe_key, status, created_at)
        values (${confirmed}, ${n}, 'notice', ${`notice:${n}`}, ${status}, ${daysAgo(100)})`;
    const deleted = await retention().run();
    assert.equal(deleted['status page subscriptions never confirmed'], 1);
    assert.equal(deleted['status page notices sent'], 1);
    const emails = await db.sql<
      { email: string }[]
    >`select email from status_page_subscribers where status_page_id = ${pageId} order by email`;
    assert.deepEqual(
      emails.map((r) => r.email),
      ['confirmed-long-ago@example.com', 'waited-6-days@example.com'],
    );
    const keys = await db.sql<
      { source_key: string }[]
    >`select source_key from status_page_notices where status_page_id = ${pageId} order by source_key`;
    assert.deepEqual(
      keys.map((r) => r.source_key),
      ['old-not-fanned-out', 'old-still-sending', 'young'],
    );
    assert.equal((await db.sql`select 1 from subscriber_deliveries where notice_id = ${old}`).length, 0, 'its deliveries went with it');
  });

  it('deletes in chunks until nothing is left past the cutoff', async () => {
    await db.sql`
      insert into trigger_events (trigger_id, message, outcome, integrations, fired_at)
      select ${triggerId}, 'old', 'dispatched', 1, ${daysAgo(200)}::timestamptz from generate_series(1, 25000)`;
    const deleted = await retention().run();
    assert.equal(deleted['trigger calls'], 25_000);
    assert.equal((await db.sql`select 1 from trigger_events where fired_at < ${daysAgo(90)}`).length, 0);
  });

  it('runs one pass at a time when asked again while running', async () => {
    const r = retention();
    const [a, b] = [r.run(), r.run()];
    assert.equal(a, b);
    await a;
  });
});
