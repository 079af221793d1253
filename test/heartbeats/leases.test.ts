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
});
