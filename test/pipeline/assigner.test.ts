import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KV, KvWatchEntry } from '@nats-io/kv';
import { Assignment } from '../../shared/src/contracts/monitoring.ts';
import { open } from '../../shared/src/crypto.ts';
import { openBucket } from '../../shared/src/provision.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { eventually } from '../harness/streams.ts';

/** Records every change of the assignments bucket as it happens. */
async function recordChanges(kv: KV) {
  const seen: KvWatchEntry[] = [];
  const waiters: { pred: (e: KvWatchEntry) => boolean; resolve: (e: KvWatchEntry) => void }[] = [];
  const iter = await kv.watch({ key: '>' });
  void (async () => {
    for await (const e of iter) {
      seen.push(e);
      for (const w of [...waiters]) {
        if (!w.pred(e)) continue;
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(e);
      }
    }
  })();
  return {
    seen,
    next(pred: (e: KvWatchEntry) => boolean, timeoutMs = 5_000): Promise<KvWatchEntry> {
      const hit = seen.find(pred);
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('no matching KV change')), timeoutMs);
        waiters.push({ pred, resolve: (e) => (clearTimeout(t), resolve(e)) });
      });
    },
    stop: () => iter.stop(),
  };
}

/** An agent's presence; `checkTypes` absent: an agent from before monitor types (http only). */
async function announce(kv: KV, region: string, agentId: string, checkTypes?: string[]) {
  const now = new Date().toISOString();
  await kv.put(
    `${region}.${agentId}`,
    JSON.stringify({
      agent_id: agentId,
      region,
      version: 't',
      hostname: 'h',
      started_at: now,
      seen_at: now,
      ...(checkTypes ? { check_types: checkTypes } : {}),
    }),
  );
}

describe('assigner', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let assignments: KV;
  let agents: KV;
  before(async () => {
    cp = await startTestControlPlane({ roles: ['api', 'assign'] });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    assignments = await openBucket(cp.nats.nc, cp.nats.names, 'assignments', { replicas: 1 });
    agents = await openBucket(cp.nats.nc, cp.nats.names, 'agents', { replicas: 1 });
    await announce(agents, 'eu-west', 'a1');
    await announce(agents, 'us-east', 'b1');
    // Until the assigner has seen both regions, a monitor would go to the ones it knows.
    const warm = (await api('POST', '/monitors', { name: 'w', url: 'https://w.example', project_id: ada.project_id })).body.data;
    await eventually(
      async () =>
        (await assignments.get(`us-east.${warm.id}`))?.operation === 'PUT' &&
        (await assignments.get(`eu-west.${warm.id}`))?.operation === 'PUT',
      'regions known',
    );
  });
  after(() => cp.stop());

  it('assigns a new monitor to every live region, with what an agent needs', async () => {
    const changes = await recordChanges(assignments);
    try {
      const m = (
        await api('POST', '/monitors', {
          name: 'x',
          url: 'https://x.example',
          project_id: ada.project_id,
          basic_auth_username: 'u',
          basic_auth_password: 'pw-1',
        })
      ).body.data;
      const eu = await changes.next((e) => e.key === `eu-west.${m.id}` && e.operation === 'PUT');
      await changes.next((e) => e.key === `us-east.${m.id}` && e.operation === 'PUT');
      const a = Assignment.parse(eu.json());
      assert.equal(a.url, 'https://x.example');
      assert.equal(a.interval, 60);
      assert.equal(a.timeout, 10);
      assert.deepEqual(a.valid_http_codes.slice(0, 2), [200, 201]);
      assert.equal(open(a.basic_auth_password_sealed!, cp.cp.keys.checkCredentials), 'pw-1');
    } finally {
      changes.stop();
    }
  });

  it('reflects an update, a pause, a resume and a delete', async () => {
    const m = (await api('POST', '/monitors', { name: 'y', url: 'https://y.example', project_id: ada.project_id, regions: ['eu-west'] }))
      .body.data;
    const changes = await recordChanges(assignments);
    try {
      await changes.next((e) => e.key === `eu-west.${m.id}` && e.operation === 'PUT');
      await api('PUT', `/monitors/${m.id}`, { url: 'https://y2.example', interval: 30 });
      const updated = await changes.next(
        (e) => e.key === `eu-west.${m.id}` && e.operation === 'PUT' && (e.json() as Assignment).interval === 30,
      );
      assert.equal((updated.json() as Assignment).url, 'https://y2.example');
      await api('PUT', `/monitors/${m.id}`, { active: false });
      await changes.next((e) => e.key === `eu-west.${m.id}` && e.operation !== 'PUT');
      await api('PUT', `/monitors/${m.id}`, { active: true });
      await changes.next((e) => e.key === `eu-west.${m.id}` && e.operation === 'PUT' && e.revision > updated.revision + 1);
      const n = changes.seen.length;
      await api('DELETE', `/monitors/${m.id}`);
      await changes.next((e) => e.key === `eu-west.${m.id}` && e.operation !== 'PUT' && changes.seen.indexOf(e) >= n);
      assert.equal(
        changes.seen.some((e) => e.key === `us-east.${m.id}`),
        false,
        'only its own regions',
      );
    } finally {
      changes.stop();
    }
  });

  it('gives a region a TCP monitor only once every live agent there runs TCP checks', async () => {
    await announce(agents, 'sa-east', 's1', ['http', 'tcp']);
    await announce(agents, 'sa-east', 's2');
    const web = (await api('POST', '/monitors', { name: 'web', url: 'https://web.example', project_id: ada.project_id })).body.data;
    await eventually(async () => (await assignments.get(`sa-east.${web.id}`))?.operation === 'PUT', 'http goes to every agent');
    const tcp = (await api('POST', '/monitors', { name: 'db', type: 'tcp', url: 'tcp://db.example:5432', project_id: ada.project_id })).body
      .data;
    // Changes are synced in order: once a monitor made after it is assigned, the TCP one was decided.
    const next = (await api('POST', '/monitors', { name: 'next', url: 'https://next.example', project_id: ada.project_id })).body.data;
    await eventually(async () => (await assignments.get(`sa-east.${next.id}`))?.operation === 'PUT', 'the next monitor assigned');
    for (const region of ['sa-east', 'eu-west', 'us-east']) {
      assert.notEqual((await assignments.get(`${region}.${tcp.id}`))?.operation, 'PUT', `${region} has an agent that runs http only`);
    }

    // s2 upgraded: it announces the types it runs, and the region gets the monitor.
    await announce(agents, 'sa-east', 's2', ['http', 'tcp']);
    await eventually(async () => (await assignments.get(`sa-east.${tcp.id}`))?.operation === 'PUT', 'assigned once all agents run tcp');
    await agents.delete('sa-east.s1');
    await agents.delete('sa-east.s2');
  });

  it('assigns monitors to a region that appears, and removes entries that have no monitor', async () => {
    const m = (await api('POST', '/monitors', { name: 'z', url: 'https://z.example', project_id: ada.project_id })).body.data;
    await assignments.put('eu-west.00000000-0000-4000-8000-000000000000', JSON.stringify({ stale: true }));
    await announce(agents, 'ap-south', 'c1');
    await eventually(async () => (await assignments.get(`ap-south.${m.id}`))?.operation === 'PUT', 'assignment in the new region');
    await eventually(
      async () => (await assignments.get('eu-west.00000000-0000-4000-8000-000000000000'))?.operation !== 'PUT',
      'orphan removed',
    );
  });
});
