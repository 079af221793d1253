import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { KV } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import type { Assignment } from '../../shared/src/contracts/monitoring.ts';
import { agentPresenceTtlMs, ensureStreams, openBucket } from '../../shared/src/provision.ts';
import { presenceIntervalMs, type RunningAgent } from '../../probe-agent/src/agent.ts';
import { rendezvousOwner } from '../../probe-agent/src/peers/rendezvous.ts';
import { createTestNats, type TestNats } from '../harness/nats.ts';
import { startTarget, type Target } from '../harness/http.ts';
import { agentConfig, assign, assignment, eventually, recordPublishes, runAgent, slotMs, timeScale } from './agent-helpers.ts';

const presenceMs = presenceIntervalMs * timeScale;
const ttlMs = agentPresenceTtlMs * timeScale;

describe('probe agents sharing a region', () => {
  let nats: TestNats;
  let kv: KV;
  let site: Target;
  let publishes: Awaited<ReturnType<typeof recordPublishes>>;
  const agents: RunningAgent[] = [];

  const agent = async (region: string, agentId: string, nc = nats.nc) => {
    const a = await runAgent({ config: agentConfig(nats.namespace), nc, region, agentId });
    agents.push(a);
    return a;
  };

  /** Twelve monitors, at least three for each agent. */
  const monitorsFor = async (region: string, agentIds: string[]): Promise<Assignment[]> => {
    for (;;) {
      const ms = Array.from({ length: 12 }, (_, i) => assignment({ region, url: `${site.url}/${region}/${i}` }));
      const owners = ms.map((m) => rendezvousOwner(m.monitor_id, agentIds));
      if (agentIds.every((id) => owners.filter((o) => o === id).length >= 3)) {
        for (const m of ms) await assign(kv, nats.names, m);
        return ms;
      }
    }
  };

  const checkedBy = (m: Assignment, agentId: string) => publishes.of(m.monitor_id).filter((r) => r.agent_id === agentId);
  const firstSlotBy = (m: Assignment, agentId: string, after: number) =>
    Math.min(
      ...checkedBy(m, agentId)
        .map((r) => Date.parse(r.scheduled_at))
        .filter((t) => t > after),
    );

  before(async () => {
    nats = await createTestNats();
    await ensureStreams(nats.nc, nats.names, { replicas: 1 });
    kv = await openBucket(nats.nc, nats.names, 'assignments', { replicas: 1 });
    site = await startTarget();
    publishes = await recordPublishes(nats.nc, nats.names);
  });
  after(async () => {
    for (const a of agents.reverse()) await a.stop();
    publishes.stop();
    await site.close();
    await nats.close();
  });

  it('checks each monitor with exactly one of two agents, the rendezvous winner', async () => {
    const [a1, a2] = await Promise.all([agent('split', 'a1'), agent('split', 'a2')]);
    await eventually(() => a1.members().length === 2 && a2.members().length === 2, 'the agents to see each other');
    const monitors = await monitorsFor('split', ['a1', 'a2']);
    await eventually(() => monitors.every((m) => publishes.of(m.monitor_id).length >= 3), 'three results per monitor');

    for (const m of monitors) {
      const checkers = new Set(publishes.of(m.monitor_id).map((r) => r.agent_id));
      assert.deepEqual([...checkers], [rendezvousOwner(m.monitor_id, ['a1', 'a2'])]);
    }
    assert.equal(a1.stats().owned + a2.stats().owned, monitors.length);
    assert.deepEqual(publishes.repeatedSlots(), []);
  });

  it('hands the monitors of a stopped agent to its peer within an interval and two presence periods', async () => {
    const [b1, b2] = await Promise.all([agent('leave', 'b1'), agent('leave', 'b2')]);
    await eventually(() => b1.members().length === 2 && b2.members().length === 2, 'the agents to see each other');
    const monitors = await monitorsFor('leave', ['b1', 'b2']);
    await eventually(() => monitors.every((m) => publishes.of(m.monitor_id).length >= 1), 'a result per monitor');

    const stoppedAt = Date.now();
    await b2.stop();
    const moved = monitors.filter((m) => rendezvousOwner(m.monitor_id, ['b1', 'b2']) === 'b2');
    await eventually(() => moved.every((m) => checkedBy(m, 'b1').length > 0), 'b1 to check the monitors of b2');

    for (const m of moved) {
      assert.ok(firstSlotBy(m, 'b1', stoppedAt) - stoppedAt <= slotMs + 2 * presenceMs, 'taken over in time');
      for (const r of checkedBy(m, 'b2')) assert.ok(Date.parse(r.scheduled_at) <= stoppedAt, 'no slot started after stop');
    }
    assert.deepEqual(b1.members(), ['b1']);
    assert.equal(b1.stats().owned, monitors.length);
    assert.deepEqual(publishes.repeatedSlots(), []);
  });

  it('takes over the monitors of an agent whose presence went stale without a delete', async () => {
    const cutOff = await connect({ servers: nats.url, name: 'cut-off agent' });
    const [c1, c2] = await Promise.all([agent('stale', 'c1'), agent('stale', 'c2', cutOff)]);
    await eventually(() => c1.members().length === 2 && c2.members().length === 2, 'the agents to see each other');
    const monitors = await monitorsFor('stale', ['c1', 'c2']);
    await eventually(() => monitors.every((m) => publishes.of(m.monitor_id).length >= 1), 'a result per monitor');

    // c2 loses NATS for good: its presence key stays until the bucket's max age, never deleted.
    const cutAt = Date.now();
    await cutOff.close();
    const orphaned = monitors.filter((m) => rendezvousOwner(m.monitor_id, ['c1', 'c2']) === 'c2');
    await eventually(() => orphaned.every((m) => checkedBy(m, 'c1').length > 0), 'c1 to check the monitors of c2');

    for (const m of orphaned) {
      const takeover = firstSlotBy(m, 'c1', cutAt) - cutAt;
      assert.ok(takeover <= ttlMs + 2 * presenceMs + slotMs, `taken over ${takeover} ms after the cut`);
    }
    assert.deepEqual(c1.members(), ['c1']);
    assert.deepEqual(publishes.repeatedSlots(), []);
  });

  it('gives a joining agent its share without any slot checked twice', async () => {
    const d1 = await agent('join', 'd1');
    const monitors = await monitorsFor('join', ['d1', 'd2']);
    await eventually(() => monitors.every((m) => publishes.of(m.monitor_id).length >= 1), 'a result per monitor');

    const joinedAt = Date.now();
    const d2 = await agent('join', 'd2');
    const share = monitors.filter((m) => rendezvousOwner(m.monitor_id, ['d1', 'd2']) === 'd2');
    await eventually(() => share.every((m) => checkedBy(m, 'd2').length >= 2), 'd2 to check its share twice');

    for (const m of share) {
      const first = firstSlotBy(m, 'd2', joinedAt);
      assert.ok(first - joinedAt <= slotMs + 2 * presenceMs, 'taken in time');
      for (const r of checkedBy(m, 'd1')) assert.ok(Date.parse(r.scheduled_at) < first, 'd1 let go of it');
    }
    for (const m of monitors.filter((m) => !share.includes(m))) assert.equal(checkedBy(m, 'd2').length, 0);
    assert.equal(d1.stats().owned + d2.stats().owned, monitors.length);
    assert.deepEqual(publishes.repeatedSlots(), []);
  });
});
