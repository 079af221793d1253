import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { startDeadline, type Deadline } from '../../control-plane/src/heartbeats/deadline/role.ts';
import { toDate } from '../../control-plane/src/heartbeats/record.ts';
import { createOutboxPublisher, type OutboxPublisher } from '../../control-plane/src/platform/outbox.ts';
import type { NatsConnection } from '../../shared/src/nats.ts';
import { pingPartition } from '../../shared/src/pings/partition.ts';
import { ensureStreams } from '../../shared/src/provision.ts';
import { startLink, type Link } from '../distributed/link.ts';
import { successPing } from '../../bench/lib/publish.ts';
import { createTestDatabase, quietLog, type TestDatabase } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { createTestNats, type TestNats } from '../harness/nats.ts';
import { eventually } from '../harness/streams.ts';

const PARTITIONS = 2;
// Seconds. The API keeps both at a minute or more; the rules do not care.
const PERIOD = 2;
const GRACE = 1;

const sleepUntil = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));

/**
 * A ping published before its heartbeat's grace runs out, that the server delivers to the
 * deadline process only after (a slow server, a congested link): the miss it answers is not
 * raised (ADR 0046). The process reaches NATS through a relay the test can hold.
 */
describe('a ping delivered late by the server', () => {
  let db: TestDatabase;
  let nats: TestNats;
  let account: TestAccount;
  let outbox: OutboxPublisher;
  let link: Link;
  let roleNc: NatsConnection;
  let role: Deadline;

  before(async () => {
    db = await createTestDatabase();
    nats = await createTestNats();
    await ensureStreams(nats.nc, nats.names, { replicas: 1 });
    account = await createAccount(db.sql);
    await db.sql`alter table heartbeats drop constraint heartbeats_grace_period_check, drop constraint heartbeats_period_check`;
    outbox = createOutboxPublisher({ sql: db.sql, nc: nats.nc, names: nats.names, log: quietLog });
    link = await startLink(Number(new URL(nats.url).port || 4222), new URL(nats.url).hostname);
    roleNc = await connect({ servers: `127.0.0.1:${link.port}`, name: 'deadline-behind-a-relay' });
    role = await startDeadline({ sql: db.sql, nc: roleNc, names: nats.names, log: quietLog, outbox, partitions: PARTITIONS, replicas: 1 });
    await eventually(async () => role.stats().owned.length === PARTITIONS, 'every partition held');
  });
  after(async () => {
    link?.release();
    await role?.stop();
    await roleNc?.close();
    outbox?.stop();
    await link?.close();
    await nats?.close();
    await db?.drop();
  });

  const ping = (heartbeatId: string) => {
    const p = successPing(heartbeatId);
    return jetstream(nats.nc).publish(nats.names.subjects.ping(pingPartition(heartbeatId, PARTITIONS), heartbeatId), JSON.stringify(p), {
      msgID: p.id,
    });
  };
  const lastPingAt = async (id: string) => {
    const [row] = await db.sql<
      { last_ping_at: string | null; status: string }[]
    >`select last_ping_at, status from heartbeats where id = ${id}`;
    return { at: row!.last_ping_at ? toDate(row!.last_ping_at)!.getTime() : null, status: row!.status };
  };
  const downs = async (id: string) => [
    ...(await db.sql<{ occurred_at: string }[]>`
      select payload->>'occurred_at' as occurred_at from outbox_events
      where payload->'subject'->>'id' = ${id} and kind = 'heartbeat.down' order by created_at`),
  ];

  it('does not raise the miss a ping stored before the deadline answers, and raises the real one once', async () => {
    const [row] = await db.sql<{ id: string }[]>`
      insert into heartbeats (project_id, name, grace_period, period)
      values (${account.project_id}, 'nightly', ${GRACE}, ${PERIOD}) returning id`;
    const id = row!.id;
    await ping(id);
    await eventually(async () => (await lastPingAt(id)).status === 'up', 'the first ping applied');
    const first = (await lastPingAt(id)).at!;
    const deadline = first + (PERIOD + GRACE) * 1000;

    // The next ping is stored 600 ms before the grace runs out; the server's answers to the
    // process (deliveries included) are held until well after it.
    await sleepUntil(deadline - 600);
    link.hold();
    const stored = await ping(id);
    assert.ok(stored.seq > 0);
    await sleepUntil(deadline + 1_500);
    assert.deepEqual(await downs(id), [], 'no miss judged while a ping stored before the deadline had not arrived');

    link.release();
    await eventually(async () => ((await lastPingAt(id)).at ?? 0) > first, 'the second ping applied');
    const second = (await lastPingAt(id)).at!;
    assert.ok(second < deadline, 'the ping is stamped before the deadline it answers');
    assert.equal((await lastPingAt(id)).status, 'up');
    assert.deepEqual(await downs(id), []);

    // No ping after it: the next deadline is a real miss, raised once, at its own instant.
    await eventually(async () => (await downs(id)).length > 0, 'the real miss', 15_000);
    const raised = await downs(id);
    assert.equal(raised.length, 1);
    assert.equal(Date.parse(raised[0]!.occurred_at), second + (PERIOD + GRACE) * 1000);
  });
});
