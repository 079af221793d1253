import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pingPartition } from '../../shared/src/pings/partition.ts';
import { eventually, readStream } from '../harness/streams.ts';
import { isoIn, leaseHolders, startDeadlinePlane, startSecondProcess, type DeadlinePlane } from './deadline-helpers.ts';

const MINUTE = 60_000;
const LEASE_TTL = 10_000;

describe('deadline partitions shared by two processes', () => {
  let plane: DeadlinePlane;
  before(async () => {
    plane = await startDeadlinePlane();
  });
  after(() => plane.stop());

  const partitionOf = (id: string) => pingPartition(id, plane.config.PING_PARTITIONS);

  /** Waits until the 16 partitions are split between `n` holders, and returns who holds what. */
  const sharedBy = (n: number, timeoutMs = 15_000) =>
    eventually(
      async () => {
        const holders = await leaseHolders(plane.leases);
        const counts = new Map<string, number>();
        for (const h of holders.values()) counts.set(h, (counts.get(h) ?? 0) + 1);
        const even = [...counts.values()].every((c) => c === plane.config.PING_PARTITIONS / n);
        return holders.size === plane.config.PING_PARTITIONS && counts.size === n && even && holders;
      },
      `partitions shared by ${n}`,
      timeoutMs,
    );

  /** Heartbeats due in 2 s, at least `perHolder` in the partitions of each holder. */
  async function heartbeatsAcross(holders: Map<number, string>, perHolder: number): Promise<{ id: string; holder: string }[]> {
    const made: { id: string; holder: string }[] = [];
    const count = (h: string) => made.filter((m) => m.holder === h).length;
    while ([...new Set(holders.values())].some((h) => count(h) < perHolder)) {
      const res = await plane.api('POST', '/heartbeats', {
        name: 'job',
        project_id: plane.account.project_id,
        next_ping_at: isoIn(plane.clock, 2_000),
        grace_period: 60,
      });
      made.push({ id: res.body.data.id, holder: holders.get(partitionOf(res.body.data.id))! });
    }
    for (const m of made)
      await eventually(async () => (await plane.heartbeats.get(m.id))?.operation === 'PUT', `${m.id} watched by its holder`);
    return made;
  }

  /**
   * Every heartbeat goes down exactly once: one outbox row and one EVENTS message each. A
   * heartbeat.late before it is no alert: a partition whose newest delivered ping is stamped
   * between a heartbeat's next ping and the end of its grace (the test's clock jumps past both,
   * the stream's timestamps do not) judges it late as of that ping first (ADR 0046).
   */
  async function downOnceEach(ids: string[]) {
    await eventually(async () => {
      const [r] = await plane.db.sql<{ n: number }[]>`
        select count(*)::int as n from heartbeats where id = any(${plane.db.sql.array(ids)}::uuid[]) and status = 'down'`;
      return r!.n === ids.length;
    }, 'every heartbeat down');
    const written = await plane.db.sql<{ id: string; kind: string }[]>`
      select payload->'subject'->>'id' as id, kind from outbox_events
      where payload->'subject'->>'id' = any(${plane.db.sql.array(ids)})`;
    assert.deepEqual(
      ids.map((id) => written.filter((w) => w.id === id && w.kind === 'heartbeat.down').length),
      ids.map(() => 1),
      'one down event written per heartbeat',
    );
    assert.deepEqual(
      [...new Set(written.map((w) => w.kind))].filter((k) => k !== 'heartbeat.down' && k !== 'heartbeat.late'),
      [],
    );
    const published = await eventually(async () => {
      const mine = (await readStream(plane.nats.nc, plane.nats.names.streams.events)).filter(
        (e) => ids.includes(e.data.subject.id) && e.data.kind === 'heartbeat.down',
      );
      return mine.length >= ids.length && mine;
    }, 'every event published');
    assert.equal(published.length, ids.length);
    assert.deepEqual(new Set(published.map((e) => e.data.subject.id)), new Set(ids));
  }

  it('takes over the partitions of a process cut off, within the lease TTL, with no alert lost or doubled', async () => {
    const second = await startSecondProcess(plane);
    try {
      const holders = await sharedBy(2);
      const made = await heartbeatsAcross(holders, 3);
      await second.cutOff();
      const survivor = await eventually(
        async () => {
          const now = new Set((await leaseHolders(plane.leases)).values());
          return now.size === 1 && (await leaseHolders(plane.leases)).size === plane.config.PING_PARTITIONS && [...now][0];
        },
        'one process holds every partition',
        3 * LEASE_TTL,
      );
      const orphans = made.filter((m) => m.holder !== survivor);
      assert.ok(orphans.length >= 3, 'heartbeats of the lost partitions');

      // A ping for a heartbeat whose partition changed hands is applied by the new holder.
      const failed = orphans[0]!.id;
      assert.equal((await fetch(`${plane.url}/heartbeat/${failed}/fail`)).status, 200);
      await eventually(async () => (await plane.events(failed)).length === 1, 'the fail applied', 3 * LEASE_TTL);

      plane.clock.advance(2_000 + MINUTE + 1);
      await downOnceEach(made.map((m) => m.id));
      assert.equal((await plane.events(failed))[0]!.data.data.reason, 'failed');
    } finally {
      await second.stop();
    }
  });

  it('hands partitions over at once when a process stops, with no alert lost or doubled', async () => {
    const second = await startSecondProcess(plane);
    let stopped = false;
    try {
      const holders = await sharedBy(2);
      const made = await heartbeatsAcross(holders, 3);
      const stoppedAt = Date.now();
      await second.stop();
      stopped = true;
      await sharedBy(1, LEASE_TTL);
      assert.ok(Date.now() - stoppedAt < LEASE_TTL, 'taken over before any lease could expire');

      plane.clock.advance(2_000 + MINUTE + 1);
      await downOnceEach(made.map((m) => m.id));
    } finally {
      if (!stopped) await second.stop();
    }
  });
});
