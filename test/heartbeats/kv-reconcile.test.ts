import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Kvm } from '@nats-io/kv';
import { createHeartbeatsProjection, pagedKeys } from '../../control-plane/src/heartbeats/deadline/projection.ts';
import { heartbeatsNow } from '../../control-plane/src/heartbeats/deadline/repo.ts';
import { pingPartition } from '../../shared/src/pings/partition.ts';
import { createTestDatabase } from '../harness/db.ts';
import { createAccount } from '../harness/factories.ts';
import { createTestNats } from '../harness/nats.ts';
import { eventually } from '../harness/streams.ts';
import { isoIn, leaseHolders, startDeadlinePlane, startSecondProcess, type DeadlinePlane } from './deadline-helpers.ts';

/**
 * KV `heartbeats` (what ping edges accept) is repaired when partitions are loaded: after the
 * deadlines are armed, apart from them, the keys of the loaded partitions are made exactly the
 * table's heartbeats. A process taking partitions over puts back a key that went missing and
 * deletes one whose heartbeat is gone, in its partitions only.
 */
describe('KV heartbeats reconciled on load', () => {
  let plane: DeadlinePlane;
  before(async () => {
    plane = await startDeadlinePlane();
  });
  after(() => plane.stop());

  const partitionOf = (id: string) => pingPartition(id, plane.config.PING_PARTITIONS);
  const present = async (id: string) => (await plane.heartbeats.get(id))?.operation === 'PUT';

  it('puts back missing keys and deletes orphans in the partitions a second process takes, and only there', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 32; i++) {
      const res = await plane.api('POST', '/heartbeats', {
        name: `job ${i}`,
        project_id: plane.account.project_id,
        next_ping_at: isoIn(plane.clock, 3_600_000),
      });
      assert.equal(res.status, 201);
      ids.push(res.body.data.id);
    }
    for (const id of ids) await eventually(() => present(id), `${id} in KV`);
    // Drift: keys lost for real heartbeats, keys left for heartbeats that no longer exist.
    for (const id of ids) await plane.heartbeats.delete(id);
    const orphans = Array.from({ length: 32 }, () => randomUUID());
    for (const id of orphans) await plane.heartbeats.put(id, JSON.stringify({ project_id: plane.account.project_id }));

    const alone = await leaseHolders(plane.leases);
    const firstHolder = [...alone.values()][0]!;
    assert.equal(new Set(alone.values()).size, 1);
    const second = await startSecondProcess(plane);
    try {
      const holders = await eventually(async () => {
        const h = await leaseHolders(plane.leases);
        return new Set(h.values()).size === 2 && h.size === plane.config.PING_PARTITIONS && h;
      }, 'partitions shared by two processes');
      // The first process kept half of its partitions: it did not load them again.
      const moved = (id: string) => holders.get(partitionOf(id)) !== firstHolder;
      const movedIds = ids.filter(moved);
      const movedOrphans = orphans.filter(moved);
      assert.ok(movedIds.length > 0 && movedIds.length < ids.length, 'some heartbeats in each process’s partitions');
      assert.ok(movedOrphans.length > 0);

      await eventually(async () => {
        for (const id of movedIds) if (!(await present(id))) return false;
        for (const id of movedOrphans) if (await present(id)) return false;
        return true;
      }, 'the taken partitions’ keys made the table’s');
      for (const id of ids.filter((id) => !moved(id)))
        assert.equal(await present(id), false, 'a partition not loaded again is left as it was');
      for (const id of orphans.filter((id) => !moved(id))) assert.equal(await present(id), true);
    } finally {
      await second.stop();
    }
  });
});

describe('KV heartbeats reconciled while heartbeats change', () => {
  it('keeps the key of a heartbeat created during the listing and puts none back for one deleted meanwhile', async () => {
    const db = await createTestDatabase();
    const nats = await createTestNats();
    try {
      const kv = await new Kvm(nats.nc).create(`${nats.namespace}_heartbeats_race`, { history: 1 });
      const { project_id } = await createAccount(db.sql);
      const insert = async () =>
        (
          await db.sql<
            { id: string }[]
          >`insert into heartbeats (project_id, name, grace_period) values (${project_id}, 'job', 60) returning id`
        )[0]!.id;
      const value = JSON.stringify({ project_id });
      const kept = await insert(); // read by the load, its key present
      const deletedMeanwhile = await insert(); // read by the load, its key missing, deleted during the listing
      const missing = await insert(); // read by the load, its key missing
      const orphan = randomUUID(); // a key with no heartbeat
      await kv.put(kept, value);
      await kv.put(orphan, value);
      const wanted = new Map([kept, deletedMeanwhile, missing].map((id) => [id, project_id]));
      let createdMeanwhile = '';

      // The listing, with the changes the heartbeats' own steps make while it runs: a heartbeat
      // created after the load read the table gets its key, one deleted loses its row.
      async function* listing() {
        yield kept;
        createdMeanwhile = await insert();
        await kv.put(createdMeanwhile, value);
        await db.sql`delete from heartbeats where id = ${deletedMeanwhile}`;
        yield createdMeanwhile;
        yield orphan;
        yield 'not-a-uuid';
      }
      await kv.put('not-a-uuid', value);
      const projection = createHeartbeatsProjection(kv, listing);
      const done = await projection.reconcile(
        wanted,
        () => true,
        (ids) => heartbeatsNow(db.sql, ids),
      );
      const present = async (id: string) => (await kv.get(id))?.operation === 'PUT';
      assert.equal(await present(kept), true);
      assert.equal(await present(missing), true, 'a missing key is put back');
      assert.equal(await present(createdMeanwhile), true, 'the key of a heartbeat created during the listing stays');
      assert.equal(await present(deletedMeanwhile), false, 'no key for a heartbeat deleted during the listing');
      assert.equal(await present(orphan), false, 'an orphan key is deleted');
      assert.equal(await present('not-a-uuid'), false, 'a key that is no heartbeat id is deleted');
      assert.deepEqual(done, { puts: 1, deletes: 2 });
      assert.equal(wanted.size, 0);
    } finally {
      await nats.close();
      await db.drop();
    }
  });
});

describe('KV keys listed page by page', () => {
  it('lists every live key once: rewritten keys once, deleted and purged keys not at all', async () => {
    const nats = await createTestNats();
    try {
      const bucket = `${nats.namespace}_paged`;
      const kv = await new Kvm(nats.nc).create(bucket, { history: 1 });
      const list = async (page: number) => {
        const keys: string[] = [];
        for await (const k of pagedKeys(nats.nc, bucket, page)) keys.push(k);
        return keys.sort();
      };
      assert.deepEqual(await list(3), [], 'an empty bucket');
      for (let i = 0; i < 10; i++) await kv.put(`k${i}`, 'v');
      await kv.put('k3', 'again');
      await kv.put('k3', 'and again');
      await kv.delete('k5');
      await kv.purge('k7');
      const live = ['k0', 'k1', 'k2', 'k3', 'k4', 'k6', 'k8', 'k9'];
      assert.deepEqual(await list(3), live);
      assert.deepEqual(await list(100), live);
      assert.deepEqual(await list(1), live);
    } finally {
      await nats.close();
    }
  });
});
