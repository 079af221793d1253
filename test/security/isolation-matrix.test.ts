import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createToken, revokeTokenByName } from '../../control-plane/src/accounts/service.ts';
import type { Sql } from '../../control-plane/src/platform/db/sql.ts';
import { openTestAlert } from '../harness/alerts.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { openSession } from '../harness/sessions.ts';

/**
 * Every REST route, taken from the application's own route table, times five callers: no token,
 * a revoked token, an MCP token, a dashboard session cookie, and another tenant's token. A route added later is covered
 * automatically; one whose resource has no fixture below fails until it gets one.
 */
interface Fixture {
  /** Creates one resource of this kind for the owner and returns its id. */
  create(api: Call, projectId: string, sql: Sql): Promise<string>;
  /** A valid create body in the owner's project. */
  body(projectId: string): Record<string, unknown>;
}

const fixtures: Record<string, Fixture> = {
  projects: {
    create: async (api) => (await api('POST', '/projects', { name: 'Owned' })).body.data.id,
    body: () => ({ name: 'Another' }),
  },
  organizations: {
    create: async () => 'unused',
    body: () => ({}),
  },
  monitors: {
    create: async (api, projectId) => (await api('POST', '/monitors', fixtures.monitors!.body(projectId))).body.data.id,
    body: (projectId) => ({ name: 'm', url: 'https://m.example', project_id: projectId }),
  },
  // Test now of a monitor not saved: a body in the owner's project, nothing to create.
  'monitor-tests': {
    create: async () => 'unused',
    body: (projectId) => ({ name: 'm', url: 'https://m.example', project_id: projectId }),
  },
  heartbeats: {
    create: async (api, projectId) => (await api('POST', '/heartbeats', fixtures.heartbeats!.body(projectId))).body.data.id,
    body: (projectId) => ({ name: 'h', project_id: projectId }),
  },
  integrations: {
    create: async (api, projectId) => (await api('POST', '/integrations', fixtures.integrations!.body(projectId))).body.data.id,
    body: (projectId) => ({ name: 'i', project_id: projectId, type: 'webhook', config: { url: 'https://hooks.example/x' } }),
  },
  triggers: {
    create: async (api, projectId) => (await api('POST', '/triggers', fixtures.triggers!.body(projectId))).body.data.id,
    body: (projectId) => ({ name: 't', project_id: projectId, default_message: 'hello' }),
  },
  'maintenance-windows': {
    create: async (api, projectId) =>
      (await api('POST', '/maintenance-windows', fixtures['maintenance-windows']!.body(projectId))).body.data.id,
    body: (projectId) => ({
      name: 'w',
      project_id: projectId,
      starts_at: '2030-01-01T00:00:00Z',
      ends_at: '2030-01-01T02:00:00Z',
      whole_project: true,
    }),
  },
  'status-pages': {
    create: async (api, projectId) => (await api('POST', '/status-pages', fixtures['status-pages']!.body(projectId))).body.data.id,
    body: (projectId) => ({ title: 'Status', project_id: projectId }),
  },
  alerts: {
    create: async (api, projectId, sql) => {
      const h = (await api('POST', '/heartbeats', { name: 'alerting', project_id: projectId })).body.data;
      return openTestAlert(sql, projectId, h);
    },
    body: () => ({}),
  },
  // The deployment's probe regions: read by every signed-in caller, no project's data.
  regions: {
    create: async () => 'unused',
    body: () => ({}),
  },
};

/** Valid bodies of posts below one resource (the owner's ids filled in), so that a refusal is about who asks. */
const bodiesBelow: Record<string, Record<string, unknown>> = {
  'POST /status-pages/:id/incidents': { title: 'Outage', message: 'Looking into it.' },
  'POST /status-pages/:id/incidents/:incident_id/updates': { status: 'resolved', message: 'Fixed.' },
  'POST /status-pages/:id/subscribers': { type: 'webhook', url: 'https://hooks.example/intruder' },
};

/** Collections that belong to no project: no project_id to refuse. */
const deploymentWide = new Set(['/organizations', '/projects', '/regions']);

describe('tenant isolation matrix', () => {
  let cp: TestControlPlane;
  let owner: TestAccount;
  let other: TestAccount;
  let revoked: string;
  let cookie: string;
  const ids: Record<string, string> = {};
  let routes: { method: string; url: string }[];

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    owner = await createAccount(cp.db.sql);
    other = await createAccount(cp.db.sql);
    revoked = (await createToken(cp.db.sql, owner.user_id, 'revoked', 'api')).token;
    await revokeTokenByName(cp.db.sql, owner.user_id, 'revoked');
    cookie = (await openSession(cp.db.sql, owner.user_id)).cookie;
    routes = cp.cp.app!.routeTable.filter((r) => r.auth === 'bearer' && r.method !== 'HEAD' && r.method !== 'OPTIONS');
    const api = apiClient(cp.url, owner.token);
    for (const kind of new Set(routes.map((r) => r.url.split('/')[1]!))) {
      const fixture = fixtures[kind];
      if (!fixture) continue;
      ids[kind] = kind === 'projects' ? owner.project_id : await fixture.create(api, owner.project_id, cp.db.sql);
    }
    // An incident of the owner's status page, for the routes below it.
    ids.incident = (await api('POST', `/status-pages/${ids['status-pages']}/incidents`, { title: 'Owned', message: 'x' })).body.data.id;
    // A subscriber of it, likewise.
    ids.subscriber = (
      await api('POST', `/status-pages/${ids['status-pages']}/subscribers`, { type: 'webhook', url: 'https://hooks.example/owned' })
    ).body.data.id;
    // Public badges of the owner's monitor and heartbeat, for the reads of them.
    for (const kind of ['monitors', 'heartbeats']) assert.equal((await api('POST', `/${kind}/${ids[kind]}/badge`)).status, 201);
  });
  after(() => cp.stop());

  const pathOf = (url: string) =>
    url
      .replace(':id', ids[url.split('/')[1]!] ?? 'missing')
      .replace(':incident_id', ids.incident ?? 'missing')
      .replace(':subscriber_id', ids.subscriber ?? 'missing');
  const bodyOf = (r: { method: string; url: string }) => {
    if (r.method === 'GET' || r.method === 'DELETE') return undefined;
    const kind = r.url.split('/')[1]!;
    return r.url.includes(':id') ? (bodiesBelow[`${r.method} ${r.url}`] ?? {}) : fixtures[kind]!.body(owner.project_id);
  };

  it('has a fixture for every resource behind a token', () => {
    const kinds = [...new Set(routes.map((r) => r.url.split('/')[1]!))];
    assert.deepEqual(
      kinds.filter((k) => !fixtures[k]),
      [],
      'add a fixture for these route prefixes',
    );
    assert.ok(routes.length >= 10, `found ${routes.length} routes`);
  });

  for (const [who, header] of [
    ['no token', () => ({})],
    ['a revoked token', () => ({ authorization: `Bearer ${revoked}` })],
    ['an MCP token', () => ({ authorization: `Bearer ${owner.mcpToken}` })],
    ['a dashboard session cookie', () => ({ cookie })],
  ] as const) {
    it(`answers 401 to ${who} on every route`, async () => {
      for (const r of routes) {
        const res = await apiClient(cp.url)(r.method, pathOf(r.url), bodyOf(r), header());
        assert.equal(res.status, 401, `${r.method} ${r.url}`);
        assert.deepEqual(res.body, { message: 'Unauthorized' }, `${r.method} ${r.url}`);
      }
    });
  }

  it("answers another tenant 404 on every route naming one of the owner's resources", async () => {
    const evil = apiClient(cp.url, other.token);
    for (const r of routes.filter((r) => r.url.includes(':id'))) {
      const res = await evil(r.method, pathOf(r.url), bodyOf(r));
      assert.equal(res.status, 404, `${r.method} ${r.url}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(res.body, { message: 'Not found' });
    }
  });

  it("answers another tenant 403 on every collection route given the owner's project", async () => {
    const evil = apiClient(cp.url, other.token);
    for (const r of routes.filter((r) => !r.url.includes(':id') && !deploymentWide.has(r.url))) {
      const res =
        r.method === 'GET' ? await evil('GET', `${r.url}?project_id=${owner.project_id}`) : await evil(r.method, r.url, bodyOf(r));
      assert.equal(res.status, 403, `${r.method} ${r.url}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(res.body, { message: 'Unauthorized access' });
    }
    const projects = await evil('GET', `/projects?organization_id=${owner.organization_id}`);
    assert.equal(projects.status, 403);
    const create = await evil('POST', '/projects', { name: 'x', organization_id: owner.organization_id });
    assert.equal(create.status, 403);
  });

  it('still lets the owner reach every resource (the fixtures are real)', async () => {
    const api = apiClient(cp.url, owner.token);
    for (const r of routes.filter((r) => r.method === 'GET' && r.url.includes(':id'))) {
      const res = await api('GET', pathOf(r.url));
      assert.equal(res.status, 200, `${r.url}: ${JSON.stringify(res.body)}`);
    }
  });
});
