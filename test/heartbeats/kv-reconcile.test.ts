import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { pingPartition } from '../../shared/src/pings/partition.ts';
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
