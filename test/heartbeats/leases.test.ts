import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Kvm, type KV } from '@nats-io/kv';
import { leaseTiming } from '../../control-plane/src/heartbeats/deadline/lease-plan.ts';
import { startLeases } from '../../control-plane/src/heartbeats/deadline/leases.ts';
import type { LeaseHolder } from '../../shared/src/contracts/pings.ts';
import { quietLog } from '../harness/db.ts';
import { createTestNats, type TestNats } from '../harness/nats.ts';

const TTL_MS = 1_500;

describe('partition leases', () => {
  let nats: TestNats;
  let kv: KV;
  before(async () => {
    nats = await createTestNats();
    // A bucket of its own with a short TTL, so that a start outlasting it takes seconds.
    kv = await new Kvm(nats.nc).create(`${nats.namespace}_leases_short`, { history: 1, ttl: TTL_MS });
  });
  after(() => nats.close());

  it('keeps its leases while starting work on them outlasts the TTL', async () => {
    const released: number[][] = [];
    let started = false;
    const leases = await startLeases({
      kv,
      names: nats.names,
      role: 'slowstart',
      partitions: 2,
      holder: 'the slow starter',
      timing: leaseTiming(TTL_MS),
      log: quietLog,
      onAcquire: async () => {
        // Loading a million heartbeats: longer than the TTL.
        await new Promise((r) => setTimeout(r, 2 * TTL_MS));
        started = true;
      },
      onRelease: async (ps) => {
        released.push(ps);
      },
    });
    try {
      assert.ok(started, 'the first round waited for the start');
      assert.deepEqual(released, [], 'no lease lost while starting');
      assert.deepEqual(leases.owned(), [0, 1]);
      assert.ok(leases.holds(0) && leases.holds(1), 'the leases are still valid');
      for (const p of [0, 1]) {
        const entry = await kv.get(nats.names.keys.lease('slowstart', p));
        assert.equal(entry?.operation, 'PUT', `the key of partition ${p} is alive`);
        assert.equal((entry!.json() as LeaseHolder).holder, 'the slow starter');
      }
      // And the next rounds renew them as usual.
      await new Promise((r) => setTimeout(r, TTL_MS));
      assert.deepEqual(released, []);
      assert.deepEqual(leases.owned(), [0, 1]);
    } finally {
      await leases.stop();
    }
  });

  it('gives a member that joins while it starts work its share at once, not once the start is done', async () => {
    const base = { kv, names: nats.names, role: 'joiners', partitions: 4, timing: leaseTiming(TTL_MS), log: quietLog };
    // The first process takes all four (alone at its first round) and its start does not end
    // until the test lets it: as a million heartbeats loading.
    let finishStart!: () => void;
    const startHeld = new Promise<void>((r) => (finishStart = r));
    let firstReleased!: (ps: number[]) => void;
    const firstGaveBack = new Promise<number[]>((r) => (firstReleased = r));
    let firstTook!: (ps: number[]) => void;
    const firstTaking = new Promise<number[]>((r) => (firstTook = r));
    let startDone = false;
    const first = startLeases({
      ...base,
      holder: 'first',
      onAcquire: async (ps) => {
        firstTook(ps);
        await startHeld;
        startDone = true;
      },
      onRelease: async (ps) => firstReleased(ps),
    });
    assert.deepEqual(await firstTaking, [0, 1, 2, 3]);

    let secondTook!: (ps: number[]) => void;
    const secondTaking = new Promise<number[]>((r) => (secondTook = r));
    const second = await startLeases({ ...base, holder: 'second', onAcquire: async (ps) => secondTook(ps), onRelease: async () => {} });
    try {
      // Its fair share is two: the two highest go back while its start still runs.
      const gaveBack = await Promise.race([
        firstGaveBack,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('nothing given back within 10 TTLs')), 10 * TTL_MS).unref()),
      ]);
      assert.deepEqual(gaveBack, [3, 2]);
      assert.equal(startDone, false, 'given back before the start ended');
      assert.deepEqual((await secondTaking).sort(), [2, 3]);
      for (const p of [2, 3]) {
        const entry = await kv.get(nats.names.keys.lease('joiners', p));
        assert.equal((entry!.json() as LeaseHolder).holder, 'second', `partition ${p} is the second's`);
      }
      finishStart();
      assert.deepEqual((await first).owned(), [0, 1]);
    } finally {
      finishStart();
      await (await first).stop();
      await second.stop();
    }
  });

  it('keeps renewing the leases it keeps while giving others back takes longer than the TTL', async () => {
    const base = { kv, names: nats.names, role: 'slowgive', partitions: 4, timing: leaseTiming(TTL_MS), log: quietLog };
    const releasedByFirst: number[][] = [];
    let gaveBack!: () => void;
    const gaveBackDone = new Promise<void>((r) => (gaveBack = r));
    const first = await startLeases({
      ...base,
      holder: 'first',
      onAcquire: async () => {},
      onRelease: async (ps) => {
        releasedByFirst.push(ps);
        // Stopping work on a partition (its actors settling) that outlasts the TTL.
        await new Promise((r) => setTimeout(r, 2 * TTL_MS));
        gaveBack();
      },
    });
    assert.deepEqual(first.owned(), [0, 1, 2, 3]);
    const second = await startLeases({ ...base, holder: 'second', onAcquire: async () => {}, onRelease: async () => {} });
    try {
      await gaveBackDone;
      assert.deepEqual(releasedByFirst, [[3, 2]], 'only the surplus was released: the kept leases were renewed meanwhile');
      assert.deepEqual(first.owned(), [0, 1]);
      assert.ok(first.holds(0) && first.holds(1));
      for (const p of [0, 1]) {
        const entry = await kv.get(nats.names.keys.lease('slowgive', p));
        assert.equal((entry!.json() as LeaseHolder).holder, 'first', `partition ${p} is still the first's`);
      }
    } finally {
      await first.stop();
      await second.stop();
    }
  });
});
