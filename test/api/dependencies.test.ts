import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { apiClient, assertInvalid, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

/** depends_on, flapping and grouping settings through the REST API (ADR 0030). */
describe('dependencies, flapping and grouping settings API', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let eve: TestAccount;
  let api: Call;
  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    eve = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
  });
  after(() => cp.stop());

  const monitor = async (name: string, extra: Record<string, unknown> = {}) => {
    const res = await api('POST', '/monitors', { name, url: 'https://example.com', project_id: ada.project_id, ...extra });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data as { id: string; depends_on: unknown[] };
  };
  const ref = (id: string, type = 'monitor') => ({ type, id });

  it('stores the parents of a monitor and of a heartbeat, in order, each once, and returns them', async () => {
    const host = await monitor('host');
    const db = await monitor('db');
    const app = await monitor('app', { depends_on: [ref(host.id), ref(db.id), ref(host.id)] });
    assert.deepEqual(app.depends_on, [ref(host.id), ref(db.id)]);
    assert.deepEqual((await api('GET', `/monitors/${app.id}`)).body.data.depends_on, [ref(host.id), ref(db.id)]);
    const hb = await api('POST', '/heartbeats', { name: 'etl', project_id: ada.project_id, depends_on: [ref(db.id)] });
    assert.equal(hb.status, 201, JSON.stringify(hb.body));
    assert.deepEqual(hb.body.data.depends_on, [ref(db.id)]);
    const patched = await api('PATCH', `/heartbeats/${hb.body.data.id}`, { depends_on: [] });
    assert.deepEqual(patched.body.data.depends_on, []);
    // An update that does not name them keeps them; deleting a parent removes the edge.
    const renamed = await api('PUT', `/monitors/${app.id}`, { name: 'app 2' });
    assert.deepEqual(renamed.body.data.depends_on, [ref(host.id), ref(db.id)]);
    assert.equal((await api('DELETE', `/monitors/${db.id}`)).status, 204);
    assert.deepEqual((await api('GET', `/monitors/${app.id}`)).body.data.depends_on, [ref(host.id)]);
    // A monitor may depend on a heartbeat.
    const withHeartbeat = await api('PUT', `/monitors/${app.id}`, { depends_on: [ref(hb.body.data.id, 'heartbeat')] });
    assert.deepEqual(withHeartbeat.body.data.depends_on, [ref(hb.body.data.id, 'heartbeat')]);
  });

  it('refuses a parent that is unknown, of another project, of the wrong type, itself, or closing a cycle, naming the position', async () => {
    const a = await monitor('a');
    const b = await monitor('b', { depends_on: [ref(a.id)] });
    const c = await monitor('c', { depends_on: [ref(b.id)] });
    const foreign = await apiClient(cp.url, eve.token)('POST', '/monitors', {
      name: 'x',
      url: 'https://example.com',
      project_id: eve.project_id,
    });
    assertInvalid(
      await api('POST', '/monitors', {
        name: 'n',
        url: 'https://example.com',
        project_id: ada.project_id,
        depends_on: [ref(a.id), ref(randomUUID())],
      }),
      ['depends_on.1'],
    );
    assertInvalid(await api('PUT', `/monitors/${a.id}`, { depends_on: [ref(foreign.body.data.id)] }), ['depends_on.0']);
    assertInvalid(await api('PUT', `/monitors/${a.id}`, { depends_on: [ref(b.id, 'heartbeat')] }), ['depends_on.0']);
    assertInvalid(await api('PUT', `/monitors/${a.id}`, { depends_on: [ref(a.id)] }), ['depends_on.0']);
    const cycle = await api('PUT', `/monitors/${a.id}`, { depends_on: [ref(c.id)] });
    assertInvalid(cycle, ['depends_on.0']);
    assert.match(cycle.body.errors['depends_on.0'][0], /cycle/);
    assertInvalid(await api('PUT', `/monitors/${a.id}`, { depends_on: [{ type: 'host', id: c.id }] }), ['depends_on.0.type']);
    assertInvalid(await api('PUT', `/monitors/${a.id}`, { depends_on: Array.from({ length: 11 }, () => ref(randomUUID())) }), [
      'depends_on',
    ]);
    // Nothing of a refused write was kept.
    assert.deepEqual((await api('GET', `/monitors/${a.id}`)).body.data.depends_on, []);
  });

  it('validates the flapping settings, off by default', async () => {
    const m = await monitor('flappy');
    const read = (await api('GET', `/monitors/${m.id}`)).body.data;
    assert.deepEqual([read.flap_threshold, read.flap_window_seconds, read.flapping_since], [null, 600, null]);
    assertInvalid(await api('PUT', `/monitors/${m.id}`, { flap_threshold: 1 }), ['flap_threshold']);
    assertInvalid(await api('PUT', `/monitors/${m.id}`, { flap_window_seconds: 30 }), ['flap_window_seconds']);
    const set = await api('PUT', `/monitors/${m.id}`, { flap_threshold: 5, flap_window_seconds: 900 });
    assert.deepEqual([set.body.data.flap_threshold, set.body.data.flap_window_seconds], [5, 900]);
  });

  it("sets a project's grouping window, off by default", async () => {
    const created = await api('POST', '/projects', { name: 'Grouped', alert_group_seconds: 30 });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.data.alert_group_seconds, 30);
    const plain = await api('POST', '/projects', { name: 'Plain' });
    assert.equal(plain.body.data.alert_group_seconds, null);
    assertInvalid(await api('PUT', `/projects/${plain.body.data.id}`, { alert_group_seconds: 4 }), ['alert_group_seconds']);
    assertInvalid(await api('PUT', `/projects/${plain.body.data.id}`, { alert_group_seconds: 601 }), ['alert_group_seconds']);
    const off = await api('PUT', `/projects/${created.body.data.id}`, { alert_group_seconds: null });
    assert.equal(off.body.data.alert_group_seconds, null);
    const renamed = await api('PUT', `/projects/${plain.body.data.id}`, { alert_group_seconds: 45 });
    assert.equal(renamed.body.data.alert_group_seconds, 45);
    assert.equal((await api('PUT', `/projects/${plain.body.data.id}`, { name: 'Still grouped' })).body.data.alert_group_seconds, 45);
  });
});
