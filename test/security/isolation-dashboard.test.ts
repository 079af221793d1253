import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createUser } from '../../control-plane/src/accounts/service.ts';
import { apiClient } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { openSession, signedOutSession } from '../harness/sessions.ts';
import { routesOf } from './routes.ts';

/**
 * Every dashboard route behind a session, taken from the route table, times the callers that must
 * not get in: no cookie, an expired session, a signed-out session, a REST API or MCP token instead
 * of a cookie, and another tenant's live session (with its own valid CSRF token). What the
 * dashboard answers (ADR 0010): a page or a form without a session is sent to sign-in (303, with
 * `next` for a page, `expired=1` when a dead cookie came along, which is cleared); a live fragment
 * gets 401 so its script stops; another tenant's id is an HTML 404 and changes nothing.
 */
const marker = `owner-${randomBytes(6).toString('hex')}`;

/** The form every POST sends: valid enough for every form, so a refusal is about who asks. */
const formFields = (projectId: string): Record<string, string> => ({
  name: 'renamed by the request',
  url: 'https://changed.example',
  _method: 'GET',
  valid_http_codes: '200-299',
  interval: '60',
  schedule_kind: 'period',
  period: '300',
  grace_period: '120',
  timezone: 'UTC',
  default_message: 'changed',
  starts_at: '2030-07-01T22:00',
  ends_at: '2030-07-01T23:00',
  scope: 'project',
  active: 'on',
  email: 'nobody@example.test',
  project_id: projectId,
});

interface Owned {
  monitor: string;
  heartbeat: string;
  trigger: string;
  integration: string;
  maintenance: string;
  statusPage: string;
  statusIncident: string;
  token: string;
  member: string;
}

/** Which fixture a path parameter names, by the route's address. */
const paramFixtures: [RegExp, keyof Owned][] = [
  [/^\/app\/monitors\/:id/, 'monitor'],
  [/^\/app\/heartbeats\/:id/, 'heartbeat'],
  [/^\/app\/triggers\/:id/, 'trigger'],
  [/^\/app\/integrations\/:id/, 'integration'],
  [/^\/app\/maintenance\/:id/, 'maintenance'],
  [/^\/app\/status-pages\/:id/, 'statusPage'],
  [/^\/app\/settings\/tokens\/:id/, 'token'],
  [/^\/app\/settings\/members\/:userId/, 'member'],
];

describe('dashboard isolation matrix', () => {
  let cp: TestControlPlane;
  let owner: TestAccount;
  let other: TestAccount;
  let owned: Owned;
  let routes: { method: string; url: string }[];

  const fill = (url: string) => {
    const entry = paramFixtures.find(([re]) => re.test(url));
    return entry ? url.replace(/:[A-Za-z]+/, owned[entry[1]]).replace(':incidentId', owned.statusIncident) : url;
  };

  /** The owner's rows, whole: any change by a refused request shows here. */
  const ownerState = async () => {
    const sql = cp.db.sql;
    const [row] = await sql<{ state: string }[]>`
      select md5(concat_ws('|',
        (select string_agg(m::text, ',' order by m.id) from monitors m where m.project_id = ${owner.project_id}),
        (select string_agg(h::text, ',' order by h.id) from heartbeats h where h.project_id = ${owner.project_id}),
        (select string_agg(t::text, ',' order by t.id) from triggers t where t.project_id = ${owner.project_id}),
        (select string_agg(i::text, ',' order by i.id) from integrations i where i.project_id = ${owner.project_id}),
        (select string_agg(w::text, ',' order by w.id) from maintenance_windows w where w.project_id = ${owner.project_id}),
        (select string_agg(concat(a.id, a.revoked_at), ',' order by a.id) from api_tokens a where a.user_id = ${owner.user_id}),
        (select string_agg(p::text, ',' order by p.id) from projects p where p.organization_id = ${owner.organization_id}),
        (select string_agg(concat(ms.user_id, ms.role), ',' order by ms.user_id) from memberships ms where ms.organization_id = ${owner.organization_id}),
        (select string_agg(s::text, ',') from status_pages s where s.project_id = ${owner.project_id}),
        (select string_agg(g::text, ',' order by g.id) from status_page_groups g join status_pages s on s.id = g.status_page_id
          where s.project_id = ${owner.project_id}),
        (select string_agg(c::text, ',' order by c.id) from status_page_components c join status_pages s on s.id = c.status_page_id
          where s.project_id = ${owner.project_id}),
        (select string_agg(i::text, ',' order by i.id) from status_page_incidents i join status_pages s on s.id = i.status_page_id
          where s.project_id = ${owner.project_id}),
        (select string_agg(u::text, ',' order by u.id) from status_page_incident_updates u join status_page_incidents i on i.id = u.incident_id
          join status_pages s on s.id = i.status_page_id where s.project_id = ${owner.project_id}),
        (select string_agg(b.slug, ',' order by b.slug) from badges b where b.monitor_id = ${owned.monitor} or b.heartbeat_id = ${owned.heartbeat})
      )) as state`;
    return row!.state;
  };

  const request = (method: string, path: string, opts: { cookie?: string; csrf?: string; headers?: Record<string, string> } = {}) =>
    fetch(cp.url + path, {
      method,
      redirect: 'manual',
      headers: {
        ...(opts.cookie ? { cookie: opts.cookie } : {}),
        ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...opts.headers,
      },
      body:
        method === 'POST'
          ? new URLSearchParams({ ...formFields(owner.project_id), ...(opts.csrf ? { _csrf: opts.csrf } : {}) }).toString()
          : undefined,
    });

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    owner = await createAccount(cp.db.sql);
    other = await createAccount(cp.db.sql);
    routes = routesOf(cp.cp.app!.routeTable, 'session');
    const api = apiClient(cp.url, owner.token);
    const project_id = owner.project_id;
    const integration = (
      await api('POST', '/integrations', {
        project_id,
        name: `${marker}-hook`,
        type: 'webhook',
        config: { url: 'https://hooks.example/x' },
      })
    ).body.data.id;
    const carol = await createUser(cp.db.sql, { email: `carol-${marker}@example.test`, password: 'carol password' });
    await cp.db.sql`insert into memberships (user_id, organization_id, role) values (${carol.user_id}, ${owner.organization_id}, 'member')`;
    const [token] = await cp.db.sql<{ id: string }[]>`select id from api_tokens where user_id = ${owner.user_id} and kind = 'api'`;
    owned = {
      monitor: (await api('POST', '/monitors', { project_id, name: `${marker}-monitor`, url: 'https://owner.example' })).body.data.id,
      heartbeat: (await api('POST', '/heartbeats', { project_id, name: `${marker}-heartbeat` })).body.data.id,
      trigger: (
        await api('POST', '/triggers', { project_id, name: `${marker}-trigger`, default_message: 'hi', integration_ids: [integration] })
      ).body.data.id,
      integration,
      maintenance: (
        await api('POST', '/maintenance-windows', {
          project_id,
          name: `${marker}-window`,
          cron: '0 3 * * 0',
          duration_seconds: 3600,
          whole_project: true,
        })
      ).body.data.id,
      statusPage: '',
      statusIncident: '',
      token: token!.id,
      member: carol.user_id,
    };
    owned.statusPage = (
      await api('POST', '/status-pages', {
        project_id,
        title: `${marker}-status`,
        groups: [{ name: `${marker}-group`, components: [{ type: 'monitor', id: owned.monitor, display_name: `${marker}-shown` }] }],
      })
    ).body.data.id;
    owned.statusIncident = (
      await api('POST', `/status-pages/${owned.statusPage}/incidents`, {
        title: `${marker}-incident`,
        message: `${marker}-update`,
        components: [{ type: 'monitor', id: owned.monitor }],
      })
    ).body.data.id;
  });
  after(() => cp.stop());

  it('knows what every path parameter of the dashboard names', () => {
    const params = routes.filter((r) => r.url.includes(':') && !paramFixtures.some(([re]) => re.test(r.url)));
    assert.deepEqual(params, [], 'add a fixture for these routes');
    assert.ok(routes.length >= 50, `found ${routes.length} routes`);
  });

  const strangers: [string, () => Promise<{ cookie?: string; headers?: Record<string, string>; deadCookie: boolean }>][] = [
    ['no cookie', async () => ({ deadCookie: false })],
    [
      'an expired session',
      async () => ({
        cookie: (await openSession(cp.db.sql, owner.user_id, { ttlHours: 1, startedAt: new Date(Date.now() - 2 * 3_600_000) })).cookie,
        deadCookie: true,
      }),
    ],
    ['a signed-out session', async () => ({ cookie: (await signedOutSession(cp.db.sql, owner.user_id)).cookie, deadCookie: true })],
    ['a REST API token', async () => ({ headers: { authorization: `Bearer ${owner.token}` }, deadCookie: false })],
    ['an MCP token', async () => ({ headers: { authorization: `Bearer ${owner.mcpToken}` }, deadCookie: false })],
    ['a REST API token as the cookie', async () => ({ cookie: `uptime_session=${owner.token}`, deadCookie: true })],
  ];

  for (const [who, credentials] of strangers) {
    it(`sends ${who} to sign-in from every page and form, and changes nothing`, async () => {
      const before = await ownerState();
      const { cookie, headers, deadCookie } = await credentials();
      for (const r of routes) {
        const path = fill(r.url);
        // A dead session's own CSRF token would not help either: send the owner's live one.
        const csrf = r.method === 'POST' ? (await openSession(cp.db.sql, owner.user_id)).csrf : undefined;
        const res = await request(r.method, path, { cookie, csrf, headers });
        assert.equal(res.status, 303, `${r.method} ${path}`);
        const location = new URL(res.headers.get('location')!, cp.url);
        assert.equal(location.pathname, '/app/sign-in', `${r.method} ${path}`);
        // Back to the page after signing in; a form (or a HEAD) has no page to return to.
        assert.equal(location.searchParams.get('next'), r.method !== 'GET' || path === '/' ? null : path, `${r.method} ${path}`);
        assert.equal(location.searchParams.get('expired'), deadCookie ? '1' : null, `${r.method} ${path}`);
        const cleared = res.headers.getSetCookie().some((c) => /^uptime_session=;/.test(c));
        assert.equal(cleared, deadCookie, `${r.method} ${path}: a dead cookie is cleared`);
        if (r.method === 'GET') {
          const fragment = await request('GET', `${path}?fragment=1`, { cookie, headers });
          assert.equal(fragment.status, 401, `${path}?fragment=1`);
        }
      }
      assert.equal(await ownerState(), before, 'nothing of the owner changed');
    });
  }

  it("answers another tenant's session 404 on every route naming one of the owner's resources, and changes nothing", async () => {
    const before = await ownerState();
    for (const r of routes.filter((r) => r.url.includes(':'))) {
      const path = fill(r.url);
      // A fresh session each time: a form may sign out or switch project.
      const s = await openSession(cp.db.sql, other.user_id);
      const res = await request(r.method, path, { cookie: s.cookie, csrf: s.csrf });
      assert.equal(res.status, 404, `${r.method} ${path}`);
      assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8', `${r.method} ${path}`);
      const page = await res.text();
      assert.ok(!page.includes(marker), `${r.method} ${path} shows the owner's data`);
    }
    assert.equal(await ownerState(), before, 'nothing of the owner changed');
  });

  it("shows another tenant's session none of the owner's data on any other page or form, and changes nothing", async () => {
    const before = await ownerState();
    for (const r of routes.filter((r) => !r.url.includes(':'))) {
      const s = await openSession(cp.db.sql, other.user_id);
      const res = await request(r.method, r.url, { cookie: s.cookie, csrf: s.csrf });
      assert.ok(res.status < 500, `${r.method} ${r.url} -> ${res.status}`);
      const page = await res.text();
      assert.ok(!page.includes(marker) && !page.includes(owner.project_id), `${r.method} ${r.url} shows the owner's data`);
      if (
        r.method === 'GET' &&
        r.url !== '/app/monitors/new' &&
        r.url !== '/app/heartbeats/new' &&
        r.url !== '/app/triggers/new' &&
        r.url !== '/app/maintenance/new' &&
        r.url !== '/app/integrations/new'
      ) {
        const fragment = await request('GET', `${r.url}?fragment=1`, { cookie: s.cookie });
        assert.ok(!(await fragment.text()).includes(marker), `${r.url}?fragment=1 shows the owner's data`);
      }
    }
    const switched = await request('POST', '/app/switch', { ...(await openSession(cp.db.sql, other.user_id)) });
    assert.equal(switched.status, 403, "switching to the owner's project");
    assert.equal(await ownerState(), before, 'nothing of the owner changed');
  });

  it("refuses every form of a live session without its CSRF token, or with another session's, and changes nothing", async () => {
    const before = await ownerState();
    const stranger = await openSession(cp.db.sql, other.user_id);
    for (const r of routes.filter((r) => r.method === 'POST')) {
      const path = fill(r.url);
      const s = await openSession(cp.db.sql, owner.user_id);
      for (const csrf of [undefined, stranger.csrf]) {
        const res = await request('POST', path, { cookie: s.cookie, csrf });
        assert.equal(res.status, 403, `${path} with ${csrf ? "another session's" : 'no'} token`);
        assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
      }
    }
    assert.equal(await ownerState(), before, 'nothing of the owner changed');
  });

  it('still lets the owner see every page of their resources (the fixtures are real)', async () => {
    const s = await openSession(cp.db.sql, owner.user_id);
    for (const r of routes.filter((r) => r.method === 'GET')) {
      const path = fill(r.url);
      const res = await request('GET', path, { cookie: s.cookie });
      assert.equal(res.status, 200, `${path}`);
    }
  });
});
