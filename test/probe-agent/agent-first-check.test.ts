import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { KV } from '@nats-io/kv';
import { resultMsgId, type Assignment, type CheckResult } from '../../shared/src/contracts/monitoring.ts';
import { ensureStreams, openBucket } from '../../shared/src/provision.ts';
import type { RunningAgent } from '../../probe-agent/src/agent.ts';
import { rendezvousOwner } from '../../probe-agent/src/peers/rendezvous.ts';
import { nextSlot, phaseOf } from '../../probe-agent/src/schedule/scheduler.ts';
import { createTestNats, type TestNats } from '../harness/nats.ts';
import { startTarget, type Target } from '../harness/http.ts';
import { agentConfig, assign, assignment, eventually, recordPublishes, runAgent, slotMs, timeScale } from './agent-helpers.ts';

/** A result of the one check owed to the change at `changedMs` (moved 1 ms when that is a slot). */
const forChange = (r: CheckResult, changedMs: number) => [changedMs, changedMs + 1].includes(Date.parse(r.scheduled_at));
const onGrid = (r: CheckResult, intervalMs: number) => Date.parse(r.scheduled_at) % intervalMs === phaseOf(r.monitor_id, intervalMs);

/**
 * The first check of a change: the agent owning a monitor checks it at once when it hears that
 * the monitor is new, re-activated or checks something else (`changed_at`), then keeps its grid.
 */
describe('probe agent first check', () => {
  let nats: TestNats;
  let kv: KV;
  let site: Target;
  let publishes: Awaited<ReturnType<typeof recordPublishes>>;
  const agents: RunningAgent[] = [];

  const agent = async (region: string, agentId?: string) => {
    const a = await runAgent({ config: agentConfig(nats.namespace), nc: nats.nc, region, ...(agentId ? { agentId } : {}) });
    agents.push(a);
    return a;
  };
  /** Puts an assignment changed now, in each region given (as the assigner does); returns the change's time in ms. */
  const change = async (a: Assignment, regions = [a.region]): Promise<number> => {
    const now = new Date();
    for (const region of regions)
      await assign(kv, nats.names, { ...a, region, revision: now.toISOString(), changed_at: now.toISOString() });
    return now.getTime();
  };

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

  it('checks a new monitor at once, for the time of its change, then on its grid', async () => {
    const probe = await agent('fc-new');
    // A 60 s interval: its first slot may be up to 12 s (scaled) away.
    const a = assignment({ region: 'fc-new', url: `${site.url}/new`, interval: 60 });
    const changedMs = await change(a);
    const [first] = await eventually(() => publishes.of(a.monitor_id).length > 0 && publishes.of(a.monitor_id), 'the first check', 5_000);
    assert.ok(forChange(first!, changedMs), `scheduled ${first!.scheduled_at}, changed ${new Date(changedMs).toISOString()}`);
    assert.equal(first!.ok, true);
    assert.equal(probe.stats().scheduler.offGrid, 1);

    const grid = assignment({ region: 'fc-new', url: `${site.url}/grid` });
    const gridChangedMs = await change(grid);
    const three = await eventually(() => publishes.of(grid.monitor_id).length >= 3 && publishes.of(grid.monitor_id), 'three checks');
    assert.ok(forChange(three[0]!, gridChangedMs));
    for (const r of three.slice(1)) assert.ok(onGrid(r, slotMs), `then on the grid: ${r.scheduled_at}`);
    assert.equal(Date.parse(three[2]!.scheduled_at) - Date.parse(three[1]!.scheduled_at), slotMs);
  });

  it('checks at once for a url edit, and not for a replayed entry or an edit that keeps changed_at', async () => {
    const old = new Date(Date.now() - 5_000).toISOString();
    const a = assignment({ region: 'fc-edit', url: `${site.url}/before`, interval: 60, changed_at: old });
    await assign(kv, nats.names, a);
    const probe = await agent('fc-edit');
    // A rename or a new revision only: the same changed_at.
    await assign(kv, nats.names, { ...a, revision: new Date().toISOString() });
    const edited = { ...a, url: `${site.url}/after` };
    const changedMs = await change(edited);
    const [first] = await eventually(
      () => publishes.of(a.monitor_id).length > 0 && publishes.of(a.monitor_id),
      'the check of the edit',
      5_000,
    );
    assert.ok(forChange(first!, changedMs));
    assert.ok(
      site.requests.some((r) => r.url === '/after'),
      'the new url checked',
    );
    assert.equal(probe.stats().scheduler.offGrid, 1, 'only the edit was checked early');
  });

  it('is checked at once by one agent of each region: the owner', async () => {
    const [east1, east2] = [await agent('fc-east', 'east-1'), await agent('fc-east', 'east-2')];
    const west = await agent('fc-west');
    await eventually(() => east1.members().length === 2 && east2.members().length === 2, 'both east agents live');
    const ms = Array.from({ length: 4 }, (_, i) => assignment({ region: 'fc-east', url: `${site.url}/shared/${i}`, interval: 60 }));
    const changes = new Map<string, number>();
    for (const m of ms) changes.set(m.monitor_id, await change(m, ['fc-east', 'fc-west']));
    const early = (region: string, m: Assignment) =>
      publishes.of(m.monitor_id).filter((r) => r.region === region && forChange(r, changes.get(m.monitor_id)!));
    await eventually(() => ms.every((m) => early('fc-east', m).length > 0 && early('fc-west', m).length > 0), 'each region checked each');
    for (const m of ms) {
      const [east] = early('fc-east', m);
      assert.equal(east!.agent_id, rendezvousOwner(m.monitor_id, ['east-1', 'east-2']));
      assert.equal(early('fc-west', m)[0]!.agent_id, west.agentId);
    }
    assert.equal(east1.stats().scheduler.offGrid + east2.stats().scheduler.offGrid, ms.length, 'one check a monitor in the region');
    assert.equal(west.stats().scheduler.offGrid, ms.length);
    const ids = ms.flatMap((m) => publishes.of(m.monitor_id)).map(resultMsgId);
    assert.equal(new Set(ids).size, ids.length, 'no check published twice');
  });

  it('checks nothing at once after a restart: the grid spreads the first checks', async () => {
    const region = 'fc-restart';
    const first = await agent(region);
    // Forty monitors created at once (checked at once) just before the agent restarts.
    const ms = Array.from({ length: 40 }, (_, i) => assignment({ region, url: `${site.url}/restart/${i}`, interval: 60 }));
    for (const m of ms) await change(m);
    await eventually(() => first.stats().scheduler.offGrid === ms.length && first.stats().checks >= ms.length, 'the first checks');
    await first.stop();

    const since = Date.now();
    const second = await agent(region);
    await eventually(() => second.stats().owned === ms.length, 'the restarted agent owns every monitor');
    // 1.5 s of a 12 s (scaled) interval: about one monitor in eight has its slot meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const until = Date.now();
    const intervalMs = 60 * 1_000 * timeScale;
    const slotCame = new Set(
      ms.filter((m) => nextSlot(since, intervalMs, phaseOf(m.monitor_id, intervalMs)) <= until).map((m) => m.monitor_id),
    );
    const checked = ms.flatMap((m) => publishes.of(m.monitor_id)).filter((r) => r.agent_id === second.agentId);
    assert.equal(second.stats().scheduler.offGrid, 0);
    for (const r of checked) {
      assert.ok(onGrid(r, intervalMs), `on its slot: ${r.scheduled_at}`);
      assert.ok(slotCame.has(r.monitor_id), 'only monitors whose slot came');
    }
    assert.ok(checked.length < ms.length, `${checked.length} of ${ms.length} monitors checked in the first ${until - since} ms`);
  });
});
