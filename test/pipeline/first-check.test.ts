import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KV } from '@nats-io/kv';
import { startAgent, type RunningAgent } from '../../probe-agent/src/agent.ts';
import { Assignment } from '../../shared/src/contracts/monitoring.ts';
import { openBucket } from '../../shared/src/provision.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startTarget, type Target } from '../harness/http.ts';
import { eventually } from '../harness/streams.ts';

type StoredResult = { region: string; scheduled_at: string; ok: boolean };

/**
 * The first check of a monitor through the whole pipeline, with the agent at its real pace (a
 * 60 s interval is 60 s, so its first slot may be up to a minute away): creating, un-pausing or
 * pointing a monitor elsewhere gets it checked and stored within seconds, by the check owed to
 * that change (scheduled at the change's time, the monitor's updated_at), not by a slot.
 */
describe('first check of a new, re-activated or edited monitor', () => {
  let cp: TestControlPlane;
  let agent: RunningAgent;
  let ada: TestAccount;
  let api: Call;
  let target: Target;
  let assignments: KV;
  before(async () => {
    cp = await startTestControlPlane({ roles: ['api', 'assign', 'ingest'] });
    agent = await startAgent({ config: cp.config, nc: cp.nats.nc, log: quietLog, region: 'local', port: 0 });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    target = await startTarget({ status: 200, body: 'ok' });
    assignments = await openBucket(cp.nats.nc, cp.nats.names, 'assignments', { replicas: 1 });
    // Until the assigner has seen the agent, a monitor checked from the live regions goes nowhere.
    await create('warm-up', '/warm-up');
    await eventually(async () => agent.stats().owned === 1, 'the region known to the assigner');
  });
  after(async () => {
    await agent.stop();
    await target.close();
    await cp.stop();
  });

  async function create(name: string, path: string) {
    const res = await api('POST', '/monitors', { name, url: `${target.url}${path}`, project_id: ada.project_id, interval: 60, timeout: 5 });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data as { id: string; updated_at: string };
  }
  const requestTo = (path: string, from = 0) =>
    eventually(async () => target.requests.slice(from).find((r) => r.url === path), `a check of ${path}`, 10_000, 20);
  /** The stored result of the check owed to the write that left the monitor at `updatedAt`. */
  const storedFor = (monitorId: string, updatedAt: string) =>
    eventually(
      async () => {
        const results: StoredResult[] = (await api('GET', `/monitors/${monitorId}/results`)).body.data;
        const changed = Date.parse(updatedAt);
        return results.find((r) => [changed, changed + 1].includes(Date.parse(r.scheduled_at)));
      },
      'the stored result of the first check',
      10_000,
      20,
    );

  it('checks a new monitor within seconds, stores the result and brings the monitor up', async () => {
    const m = await create('new', '/new');
    await requestTo('/new');
    const stored = await storedFor(m.id, m.updated_at);
    assert.equal(stored.ok, true);
    assert.equal(stored.region, 'local');
    await eventually(async () => (await api('GET', `/monitors/${m.id}`)).body.data.status === 1, 'the monitor up', 10_000, 20);
  });

  it('checks a monitor again within seconds when it is un-paused', async () => {
    const m = await create('paused', '/paused');
    await storedFor(m.id, m.updated_at);
    const assigned = agent.stats().assigned;
    await api('PUT', `/monitors/${m.id}`, { active: false });
    await eventually(async () => agent.stats().assigned === assigned - 1, 'the monitor unassigned');
    const from = target.requests.length;
    const resumed = (await api('PUT', `/monitors/${m.id}`, { active: true })).body.data;
    await requestTo('/paused', from);
    const stored = await storedFor(m.id, resumed.updated_at);
    assert.equal(stored.ok, true);
  });

  it('checks the new url within seconds of an edit, and nothing early for a rename', async () => {
    const m = await create('moving', '/before');
    await storedFor(m.id, m.updated_at);
    const edited = (await api('PUT', `/monitors/${m.id}`, { url: `${target.url}/after` })).body.data;
    await requestTo('/after');
    await storedFor(m.id, edited.updated_at);

    const key = cp.nats.names.keys.assignment('local', m.id);
    const before = Assignment.parse((await assignments.get(key))!.json());
    await api('PUT', `/monitors/${m.id}`, { name: 'moved' });
    const after = await eventually(async () => {
      const a = Assignment.parse((await assignments.get(key))!.json());
      return a.revision !== before.revision && a;
    }, 'the rename in the assignment');
    assert.equal(after.changed_at, before.changed_at, 'a rename is no change of what is checked');
    assert.equal(Date.parse(before.changed_at!), Date.parse(edited.updated_at));
  });
});
