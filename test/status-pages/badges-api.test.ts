import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

/** The public badges of monitors and heartbeats through the REST API: what the dashboard's "Public badges" card does. */
describe('badges API', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let bob: TestAccount;
  let api: Call;
  let bobs: Call;
  let monitorId: string;
  let heartbeatId: string;

  /** The addresses are under PUBLIC_URL; this server is reached at its own port. */
  const PUBLIC_URL = 'https://uptime.example.test';
  const fetchPublic = (url: string) => {
    assert.ok(url.startsWith(`${PUBLIC_URL}/badge/`), url);
    return fetch(cp.url + url.slice(PUBLIC_URL.length));
  };

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'], env: { PUBLIC_URL } });
    [ada, bob] = await Promise.all([createAccount(cp.db.sql), createAccount(cp.db.sql)]);
    api = apiClient(cp.url, ada.token);
    bobs = apiClient(cp.url, bob.token);
    monitorId = (await api('POST', '/monitors', { name: 'shop-prod', url: 'https://example.com', project_id: ada.project_id })).body.data
      .id;
    heartbeatId = (await api('POST', '/heartbeats', { name: 'backup-job', project_id: ada.project_id })).body.data.id;
    await cp.db.sql`update monitors set status = 1 where id = ${monitorId}`;
  });
  after(() => cp.stop());

  it('creates a monitor’s badge once, gives its public URLs, and the SVG and JSON are served there', async () => {
    const none = await api('GET', `/monitors/${monitorId}/badge`);
    assert.equal(none.status, 404, JSON.stringify(none.body));

    const created = await api('POST', `/monitors/${monitorId}/badge`);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.message, 'Badge created successfully');
    const badge = created.body.data;
    assert.equal(badge.type, 'monitor');
    assert.equal(badge.id, monitorId);
    assert.match(badge.slug, /^[A-Za-z0-9_-]{22}$/);
    const base = `${PUBLIC_URL}/badge/${badge.slug}`;
    assert.equal(badge.svg_url, `${base}.svg`);
    assert.deepEqual(badge.urls, {
      status: { svg: `${base}/status.svg`, json: `${base}/status.json` },
      uptime: { svg: `${base}/uptime.svg`, json: `${base}/uptime.json` },
      response: { svg: `${base}/response.svg`, json: `${base}/response.json` },
    });

    const again = await api('POST', `/monitors/${monitorId}/badge`);
    assert.equal(again.status, 200, 'a second create returns the badge it has');
    assert.deepEqual(again.body.data, badge);
    assert.deepEqual((await api('GET', `/monitors/${monitorId}/badge`)).body.data, badge);

    const svg = await fetchPublic(badge.urls.status.svg);
    assert.equal(svg.status, 200);
    assert.match(svg.headers.get('content-type')!, /^image\/svg\+xml/);
    assert.match(await svg.text(), /<svg/);
    const json = await fetchPublic(badge.urls.status.json);
    assert.equal(json.status, 200);
    const endpoint = (await json.json()) as { schemaVersion: number; label: string; message: string };
    assert.deepEqual([endpoint.schemaVersion, endpoint.label, endpoint.message], [1, 'shop-prod', 'operational']);
    assert.equal((await fetchPublic(badge.svg_url)).status, 200);
  });

  it('removes a badge: its addresses answer 404, and so does removing it again', async () => {
    const badge = (await api('POST', `/heartbeats/${heartbeatId}/badge`)).body.data;
    assert.equal(badge.type, 'heartbeat');
    assert.deepEqual(Object.keys(badge.urls), ['status', 'uptime'], 'a heartbeat has no response time');
    assert.equal((await fetchPublic(badge.urls.uptime.json)).status, 200);

    const removed = await api('DELETE', `/heartbeats/${heartbeatId}/badge`);
    assert.equal(removed.status, 204, JSON.stringify(removed.body));
    assert.equal((await fetchPublic(badge.urls.uptime.json)).status, 404);
    assert.equal((await fetchPublic(badge.urls.status.svg)).status, 404);
    assert.equal((await fetchPublic(badge.svg_url)).status, 404);
    assert.equal((await api('GET', `/heartbeats/${heartbeatId}/badge`)).status, 404);
    assert.equal((await api('DELETE', `/heartbeats/${heartbeatId}/badge`)).status, 404);

    const renewed = (await api('POST', `/heartbeats/${heartbeatId}/badge`)).body.data;
    assert.notEqual(renewed.slug, badge.slug, 'a new badge is at a new address');
  });

  it('answers 404 for another organization’s monitor or heartbeat, and leaves its badge alone', async () => {
    const badge = (await api('POST', `/monitors/${monitorId}/badge`)).body.data;
    for (const path of [`/monitors/${monitorId}/badge`, `/heartbeats/${heartbeatId}/badge`]) {
      for (const method of ['GET', 'POST', 'DELETE'] as const) {
        const res = await bobs(method, path);
        assert.equal(res.status, 404, `${method} ${path}: ${JSON.stringify(res.body)}`);
        assert.deepEqual(res.body, { message: 'Not found' });
      }
    }
    assert.equal((await fetchPublic(badge.urls.status.svg)).status, 200);
    assert.equal((await api('GET', `/heartbeats/${monitorId}/badge`)).status, 404, 'a monitor id is not a heartbeat');
    assert.equal((await api('POST', `/monitors/${randomUUID()}/badge`)).status, 404);
  });

  it('answers 404 for an id that is not a UUID, as for any path id, and 401 without a token', async () => {
    for (const method of ['GET', 'POST', 'DELETE'] as const) {
      const res = await api(method, '/heartbeats/not-a-uuid/badge');
      assert.equal(res.status, 404, `${method}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(res.body, { message: 'Not found' });
    }
    assert.equal((await apiClient(cp.url)('GET', `/monitors/${monitorId}/badge`)).status, 401);
  });
});
