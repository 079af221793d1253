import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { consumerName } from '../../control-plane/src/heartbeats/deadline/consumer.ts';
import { startDeadline, type Deadline } from '../../control-plane/src/heartbeats/deadline/role.ts';
import { createOutboxPublisher, type OutboxPublisher } from '../../control-plane/src/platform/outbox.ts';
import type { Ping } from '../../shared/src/contracts/pings.ts';
import { toDate } from '../../control-plane/src/heartbeats/record.ts';
import { pingPartition } from '../../shared/src/pings/partition.ts';
import { ensureStreams } from '../../shared/src/provision.ts';
import { successPing } from '../../bench/lib/publish.ts';
import { createTestDatabase, quietLog, type TestDatabase } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { createTestNats, type TestNats } from '../harness/nats.ts';
import { eventually } from '../harness/streams.ts';

const PARTITIONS = 4;
// Seconds. The API keeps both at a minute or more; the rules do not care, and a short schedule
// lets a backlog outlast period and grace in seconds instead of minutes.
const PERIOD = 2;
const GRACE = 2;

/**
 * The deadline role away while pings keep coming (a crash, a deploy, no lease holder), and one
 * heartbeat flooded: whatever the backlog, a miss is judged from the pings' own instants, on
 * the real clock and real Postgres and NATS.
 */
describe('deadlines while a backlog of pings is replayed', () => {
  let db: TestDatabase;
  let nats: TestNats;
  let account: TestAccount;
  let outbox: OutboxPublisher;
  const roles: Deadline[] = [];

  before(async () => {
    db = await createTestDatabase();
    nats = await createTestNats();
    await ensureStreams(nats.nc, nats.names, { replicas: 1 });
    account = await createAccount(db.sql);
    await db.sql`alter table heartbeats drop constraint heartbeats_grace_period_check, drop constraint heartbeats_period_check`;
    outbox = createOutboxPublisher({ sql: db.sql, nc: nats.nc, names: nats.names, log: quietLog });
  });
  after(async () => {
    for (const p of [...pingers]) await p.stop();
    for (const r of roles) await r.stop();
    outbox.stop();
    await nats.close();
    await db.drop();
  });

  const startRole = async () => {
    const role = await startDeadline({
      sql: db.sql,
      nc: nats.nc,
      names: nats.names,
      log: quietLog,
      outbox,
      partitions: PARTITIONS,
      replicas: 1,
    });
    roles.push(role);
    await eventually(async () => role.stats().owned.length === PARTITIONS, 'every partition held');
    return role;
  };
  const stopRole = async (role: Deadline) => {
    await role.stop();
    roles.splice(roles.indexOf(role), 1);
  };

  const heartbeats = async (n: number): Promise<string[]> =>
    (
      await db.sql<{ id: string }[]>`
        insert into heartbeats (project_id, name, grace_period, period)
        select ${account.project_id}, 'job ' || g, ${GRACE}, ${PERIOD} from generate_series(1, ${n}) g returning id`
    ).map((r) => r.id);

  const js = () => jetstream(nats.nc);
  /** A ping as an edge publishes it. */
  const message = (heartbeatId: string, kind: Ping['kind'] = 'success') => {
    const p: Ping = { ...successPing(heartbeatId), kind };
    return {
      subject: nats.names.subjects.ping(pingPartition(heartbeatId, PARTITIONS), heartbeatId),
      payload: JSON.stringify(p),
      msgID: p.id,
    };
  };
  const ping = (heartbeatId: string) => {
    const m = message(heartbeatId);
    return js().publish(m.subject, m.payload, { msgID: m.msgID });
  };

  const pingers = new Set<{ stop(): Promise<number> }>();
  /** Pings every heartbeat of `ids` every `everyMs` until stopped; resolves with the count sent. */
  const steadily = (ids: readonly string[], everyMs: number) => {
    let on = true;
    let sent = 0;
    const loop = (async () => {
      while (on) {
        const t = Date.now();
        await Promise.all(ids.map((id) => ping(id)));
        sent += ids.length;
        await new Promise((r) => setTimeout(r, Math.max(0, t + everyMs - Date.now())));
      }
    })();
    const pinger = {
      async stop() {
        on = false;
        pingers.delete(pinger);
        await loop;
        return sent;
      },
    };
    pingers.add(pinger);
    return pinger;
  };

  const alerts = async (ids: readonly string[]) => [
    ...(await db.sql<{ id: string; kind: string; occurred_at: string; reason: string }[]>`
      select payload->'subject'->>'id' as id, kind, payload->>'occurred_at' as occurred_at, payload->'data'->>'reason' as reason
      from outbox_events where payload->'subject'->>'id' = any(${db.sql.array([...ids])}) and kind in ('heartbeat.down', 'heartbeat.up')
      order by created_at`),
  ];

  /** Every ping published so far is applied and answered, in every partition. */
  const drained = () =>
    eventually(
      async () => {
        const jsm = await jetstreamManager(nats.nc);
        for (let p = 0; p < PARTITIONS; p++) {
          const c = await jsm.consumers.info(nats.names.streams.pings, consumerName(p));
          if (c.num_pending + c.num_ack_pending > 0) return false;
        }
        return true;
      },
      'every ping applied',
      120_000,
    );

  it('replays pings sent while no deadline process ran without raising a miss they answer, and raises the real miss once', async () => {
    const [steady, silent] = await heartbeats(2);
    let role = await startRole();
    await Promise.all([ping(steady!), ping(silent!)]);
    const pinging = steadily([steady!], 250);
    await eventually(async () => {
      const rows = await db.sql`select 1 from heartbeats where id = any(${db.sql.array([steady!, silent!])}::uuid[]) and status = 'up'`;
      return rows.length === 2;
    }, 'both heartbeats up');
    const [row] = await db.sql<{ last_ping_at: string }[]>`select last_ping_at from heartbeats where id = ${silent!}`;
    const last = toDate(row!.last_ping_at)!;

    // Away for four times period + grace: the steady job keeps pinging, the silent one does not.
    await stopRole(role);
    await new Promise((r) => setTimeout(r, 4 * (PERIOD + GRACE) * 1000));
    role = await startRole();
    await drained();
    const sent = await pinging.stop();
    await drained();

    const raised = await alerts([steady!, silent!]);
    assert.deepEqual(
      raised.filter((a) => a.id === steady).map((a) => a.kind),
      [],
      `the steady heartbeat (${sent} pings, never a gap of ${PERIOD + GRACE} s) raised no alert`,
    );
    const silentAlerts = raised.filter((a) => a.id === silent);
    assert.deepEqual(
      silentAlerts.map((a) => [a.kind, a.reason]),
      [['heartbeat.down', 'missed']],
      'the silent one went down once',
    );
    assert.equal(Date.parse(silentAlerts[0]!.occurred_at), last.getTime() + (PERIOD + GRACE) * 1000, 'at the instant its grace ran out');
    await eventually(async () => role.stats().caughtUp.length === PARTITIONS, 'every partition caught up again');
  });

  it('applies a flood of pings to one heartbeat in few steps, and other heartbeats of its partitions miss nothing meanwhile', async () => {
    const role = roles[0] ?? (await startRole());
    const [hot, ...others] = await heartbeats(9);
    const stepsBefore = role.stats().steps;
    const pinging = steadily(others, 250);
    const flood = 20_000;
    const pub = js();
    for (let i = 0; i < flood; i += 500) {
      await Promise.all(
        Array.from({ length: Math.min(500, flood - i) }, () => {
          const m = message(hot!);
          return pub.publish(m.subject, m.payload, { msgID: m.msgID });
        }),
      );
    }
    await drained();
    await pinging.stop();
    await drained();

    assert.deepEqual(await alerts([hot!, ...others]), [], 'no heartbeat went down');
    const [log] = await db.sql<{ n: number }[]>`select count(*)::int as n from heartbeat_pings where heartbeat_id = ${hot!}`;
    assert.equal(log!.n, 100, 'the hot heartbeat keeps its newest 100 pings');
    const steps = role.stats().steps - stepsBefore;
    assert.ok(steps < flood / 20, `${flood} pings of one heartbeat, and those of the others, took ${steps} steps`);
  });
});
