import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { revokeTokenByName } from '../../control-plane/src/accounts/service.ts';
import { openTestAlert } from '../harness/alerts.ts';
import { apiClient } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { openSession } from '../harness/sessions.ts';
import { routesOf } from './routes.ts';

/**
 * `/mcp` times the callers that must not get in (no token, a revoked MCP token, a REST API token,
 * a dashboard session), on every method the route table has for it; then every tool the server
 * lists, called with another tenant's MCP token and the owner's ids: a tool error (403 for a
 * project, 404 for anything in it) or only the caller's own data, and nothing of the owner's
 * changed. A tool added later fails here until it has an expectation below.
 */
const marker = `owner-${randomBytes(6).toString('hex')}`;

interface Ids {
  project: string;
  monitor: string;
  heartbeat: string;
  trigger: string;
  window: string;
  statusPage: string;
  incident: string;
  subscriber: string;
  alert: string;
  integration: string;
}

/** Arguments naming the owner's things, per tool; `lists` tools answer with the caller's own data. */
const toolCalls: Record<
  string,
  { args: (ids: Ids) => Record<string, unknown>; refused: 403 | 404 } | { args: (ids: Ids) => Record<string, unknown>; lists: true }
> = {
  list_projects: { args: () => ({}), lists: true },
  project_status: { args: (ids) => ({ project_id: ids.project }), refused: 403 },
  list_monitors: { args: (ids) => ({ project_id: ids.project }), refused: 403 },
  get_monitor: { args: (ids) => ({ id: ids.monitor }), refused: 404 },
  monitor_results: { args: (ids) => ({ id: ids.monitor }), refused: 404 },
  monitor_incidents: { args: (ids) => ({ id: ids.monitor }), refused: 404 },
  create_monitor: { args: (ids) => ({ project_id: ids.project, name: 'intruder', url: 'https://intruder.example' }), refused: 403 },
  update_monitor: { args: (ids) => ({ id: ids.monitor, changes: { name: 'intruder' } }), refused: 404 },
  pause_monitor: { args: (ids) => ({ id: ids.monitor }), refused: 404 },
  resume_monitor: { args: (ids) => ({ id: ids.monitor }), refused: 404 },
  test_monitor: { args: (ids) => ({ id: ids.monitor }), refused: 404 },
  list_heartbeats: { args: (ids) => ({ project_id: ids.project }), refused: 403 },
  get_heartbeat: { args: (ids) => ({ id: ids.heartbeat }), refused: 404 },
  list_heartbeat_pings: { args: (ids) => ({ id: ids.heartbeat }), refused: 404 },
  create_heartbeat: { args: (ids) => ({ project_id: ids.project, name: 'intruder' }), refused: 403 },
  update_heartbeat: { args: (ids) => ({ id: ids.heartbeat, changes: { name: 'intruder' } }), refused: 404 },
  update_project: { args: (ids) => ({ id: ids.project, changes: { alert_group_seconds: 30 } }), refused: 404 },
  list_triggers: { args: (ids) => ({ project_id: ids.project }), refused: 403 },
  fire_trigger: { args: (ids) => ({ id: ids.trigger }), refused: 404 },
  preview_integration: { args: (ids) => ({ id: ids.integration }), refused: 404 },
  list_regions: { args: () => ({}), lists: true },
  list_maintenance_windows: { args: (ids) => ({ project_id: ids.project }), refused: 403 },
  create_maintenance_window: {
    args: (ids) => ({
      project_id: ids.project,
      name: 'intruder',
      starts_at: '2030-01-01T00:00:00Z',
      ends_at: '2030-01-01T01:00:00Z',
      whole_project: true,
    }),
    refused: 403,
  },
  update_maintenance_window: { args: (ids) => ({ id: ids.window, changes: { name: 'intruder' } }), refused: 404 },
  delete_maintenance_window: { args: (ids) => ({ id: ids.window }), refused: 404 },
  list_status_pages: { args: (ids) => ({ project_id: ids.project }), refused: 403 },
  get_status_page: { args: (ids) => ({ id: ids.statusPage }), refused: 404 },
  create_status_page: { args: (ids) => ({ project_id: ids.project, title: 'intruder' }), refused: 403 },
  update_status_page: { args: (ids) => ({ id: ids.statusPage, changes: { title: 'intruder' } }), refused: 404 },
  list_status_page_incidents: { args: (ids) => ({ status_page_id: ids.statusPage }), refused: 404 },
  create_status_page_incident: { args: (ids) => ({ status_page_id: ids.statusPage, title: 'intruder', message: 'x' }), refused: 404 },
  update_status_page_incident: {
    args: (ids) => ({ status_page_id: ids.statusPage, incident_id: ids.incident, changes: { title: 'intruder', published: true } }),
    refused: 404,
  },
  post_status_page_incident_update: {
    args: (ids) => ({ status_page_id: ids.statusPage, incident_id: ids.incident, status: 'resolved', message: 'intruder' }),
    refused: 404,
  },
  get_status_page_incident: { args: (ids) => ({ status_page_id: ids.statusPage, incident_id: ids.incident }), refused: 404 },
  delete_status_page_incident: { args: (ids) => ({ status_page_id: ids.statusPage, incident_id: ids.incident }), refused: 404 },
  list_status_page_subscribers: { args: (ids) => ({ status_page_id: ids.statusPage }), refused: 404 },
  get_status_page_subscriber: { args: (ids) => ({ status_page_id: ids.statusPage, subscriber_id: ids.subscriber }), refused: 404 },
  add_status_page_subscriber: {
    args: (ids) => ({ status_page_id: ids.statusPage, type: 'webhook', url: 'https://hooks.example/intruder' }),
    refused: 404,
  },
  remove_status_page_subscriber: { args: (ids) => ({ status_page_id: ids.statusPage, subscriber_id: ids.subscriber }), refused: 404 },
  delete_status_page: { args: (ids) => ({ id: ids.statusPage }), refused: 404 },
  list_alerts: { args: (ids) => ({ project_id: ids.project }), refused: 403 },
  acknowledge_alert: { args: (ids) => ({ id: ids.alert }), refused: 404 },
  snooze_alert: { args: (ids) => ({ id: ids.alert, minutes: 30 }), refused: 404 },
  snooze_monitor: { args: (ids) => ({ id: ids.monitor, minutes: 30 }), refused: 404 },
  snooze_heartbeat: { args: (ids) => ({ id: ids.heartbeat, minutes: 30 }), refused: 404 },
  get_badge: { args: (ids) => ({ type: 'monitor', id: ids.monitor }), refused: 404 },
  create_badge: { args: (ids) => ({ type: 'heartbeat', id: ids.heartbeat }), refused: 404 },
  delete_badge: { args: (ids) => ({ type: 'monitor', id: ids.monitor }), refused: 404 },
};

/** Tools that list, called without a project: the caller's own projects only. */
const unscopedLists = ['list_projects', 'list_monitors', 'list_heartbeats', 'list_triggers', 'list_alerts'];

describe('MCP isolation matrix', () => {
  let cp: TestControlPlane;
  let owner: TestAccount;
  let other: TestAccount;
  let revoked: string;
  let ids: Ids;
  let routes: { method: string; url: string }[];
  let rpcId = 0;

  const rpc = async (
    token: string | undefined,
    method: string,
    params: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) => {
    const res = await fetch(`${cp.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null, text };
  };
  const callTool = async (token: string, name: string, args: Record<string, unknown>) => {
    const res = await rpc(token, 'tools/call', { name, arguments: args });
    assert.equal(res.status, 200, `${name}: ${res.text.slice(0, 300)}`);
    assert.equal(res.body.error, undefined, `${name}: ${res.text.slice(0, 300)}`);
    return res.body.result as { isError?: boolean; content: { type: string; text: string }[] };
  };

  const ownerState = async () => {
    const [row] = await cp.db.sql<{ state: string }[]>`
      select md5(concat_ws('|',
        (select string_agg(m::text, ',' order by m.id) from monitors m where m.project_id = ${owner.project_id}),
        (select string_agg(h::text, ',' order by h.id) from heartbeats h where h.project_id = ${owner.project_id}),
        (select string_agg(t::text, ',' order by t.id) from triggers t where t.project_id = ${owner.project_id}),
        (select count(*)::text from trigger_events e where e.trigger_id = ${ids.trigger}),
        (select string_agg(w::text, ',' order by w.id) from maintenance_windows w where w.project_id = ${owner.project_id}),
        (select string_agg(s::text, ',' order by s.id) from status_pages s where s.project_id = ${owner.project_id}),
        (select string_agg(c::text, ',' order by c.id) from status_page_components c join status_pages s on s.id = c.status_page_id
          where s.project_id = ${owner.project_id}),
        (select string_agg(i::text, ',' order by i.id) from status_page_incidents i join status_pages s on s.id = i.status_page_id
          where s.project_id = ${owner.project_id}),
        (select string_agg(u::text, ',' order by u.id) from status_page_incident_updates u join status_page_incidents i on i.id = u.incident_id
          join status_pages s on s.id = i.status_page_id where s.project_id = ${owner.project_id}),
        (select string_agg(b::text, ',' order by b.id) from status_page_subscribers b join status_pages s on s.id = b.status_page_id
          where s.project_id = ${owner.project_id}),
        (select string_agg(a::text, ',' order by a.id) from alerts a where a.project_id = ${owner.project_id}),
        (select string_agg(g::text, ',' order by g.slug) from badges g
          where g.monitor_id = ${ids.monitor} or g.heartbeat_id = ${ids.heartbeat})
      )) as state`;
    return row!.state;
  };

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    owner = await createAccount(cp.db.sql);
    other = await createAccount(cp.db.sql);
    // A user has one MCP token at a time (a new one revokes the old): revoke a third user's.
    const third = await createAccount(cp.db.sql);
    revoked = third.mcpToken;
    await revokeTokenByName(cp.db.sql, third.user_id, 'test-mcp', 'mcp');
    routes = routesOf(cp.cp.app!.routeTable, 'mcp');
    const api = apiClient(cp.url, owner.token);
    const project_id = owner.project_id;
    await api('PUT', `/projects/${project_id}`, { name: `${marker}-project` });
    const heartbeat = (await api('POST', '/heartbeats', { project_id, name: `${marker}-heartbeat` })).body.data;
    ids = {
      project: project_id,
      alert: await openTestAlert(cp.db.sql, project_id, heartbeat),
      monitor: (await api('POST', '/monitors', { project_id, name: `${marker}-monitor`, url: 'https://owner.example' })).body.data.id,
      heartbeat: heartbeat.id,
      trigger: (await api('POST', '/triggers', { project_id, name: `${marker}-trigger`, default_message: 'hi' })).body.data.id,
      window: (
        await api('POST', '/maintenance-windows', {
          project_id,
          name: `${marker}-window`,
          starts_at: '2030-01-01T00:00:00Z',
          ends_at: '2030-01-01T02:00:00Z',
          whole_project: true,
        })
      ).body.data.id,
      statusPage: (
        await api('POST', '/status-pages', {
          project_id,
          title: `${marker}-status`,
          groups: [{ name: `${marker}-group`, components: [{ type: 'heartbeat', id: heartbeat.id }] }],
        })
      ).body.data.id,
      incident: '',
      subscriber: '',
      integration: (
        await api('POST', '/integrations', {
          project_id,
          name: `${marker}-hook`,
          type: 'webhook',
          config: { url: 'https://hooks.example/x' },
        })
      ).body.data.id,
    };
    ids.incident = (
      await api('POST', `/status-pages/${ids.statusPage}/incidents`, { title: `${marker}-incident`, message: `${marker}-update` })
    ).body.data.id;
    ids.subscriber = (
      await api('POST', `/status-pages/${ids.statusPage}/subscribers`, { type: 'webhook', url: 'https://hooks.example/owned' })
    ).body.data.id; // The monitor's public badge, which an intruder must neither read nor remove.
    assert.equal((await api('POST', `/monitors/${ids.monitor}/badge`)).status, 201);
  });
  after(() => cp.stop());

  for (const [who, headers] of [
    ['no token', () => ({})],
    ['a revoked MCP token', () => ({ authorization: `Bearer ${revoked}` })],
    ['a REST API token', () => ({ authorization: `Bearer ${owner.token}` })],
    ['an MCP token with stray spaces', () => ({ authorization: `Bearer  ${owner.mcpToken}` })],
    ['a dashboard session', async () => ({ cookie: (await openSession(cp.db.sql, owner.user_id)).cookie })],
  ] as const) {
    it(`answers 401 to ${who} on every method of /mcp`, async () => {
      assert.ok(routes.length >= 1);
      for (const r of routes) {
        const res = await fetch(`${cp.url}${r.url}`, {
          method: r.method,
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(await headers()) },
          body: r.method === 'POST' ? JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) : undefined,
        });
        assert.equal(res.status, 401, `${r.method} ${r.url}`);
        assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="uptime-mcp"');
        if (r.method !== 'HEAD') assert.deepEqual(await res.json(), { message: 'Unauthorized' }, `${r.method} ${r.url}`);
      }
    });
  }

  it('has an expectation for every tool the server lists', async () => {
    const listed = await rpc(other.mcpToken, 'tools/list');
    const names = (listed.body.result.tools as { name: string }[]).map((t) => t.name).sort();
    assert.deepEqual(names, Object.keys(toolCalls).sort(), 'add the new tools to toolCalls');
  });

  it("refuses another tenant every tool on the owner's ids, and changes nothing", async () => {
    const before = await ownerState();
    for (const [name, call] of Object.entries(toolCalls)) {
      const result = await callTool(other.mcpToken, name, call.args(ids));
      const text = result.content.map((c) => c.text).join('\n');
      assert.ok(!text.includes(marker), `${name} shows the owner's data: ${text.slice(0, 300)}`);
      if ('refused' in call) {
        assert.equal(result.isError, true, `${name}: ${text.slice(0, 300)}`);
        assert.equal(JSON.parse(text).status, call.refused, `${name}: ${text}`);
      } else {
        assert.notEqual(result.isError, true, `${name}: ${text.slice(0, 300)}`);
      }
    }
    assert.equal(await ownerState(), before, 'nothing of the owner changed');
  });

  it('lists another tenant only its own projects, monitors, heartbeats and triggers', async () => {
    await callTool(other.mcpToken, 'create_monitor', { project_id: other.project_id, name: 'mine', url: 'https://mine.example' });
    for (const name of unscopedLists) {
      const text = (await callTool(other.mcpToken, name, {})).content[0]!.text;
      assert.ok(!text.includes(marker) && !text.includes(owner.project_id), `${name}: ${text.slice(0, 300)}`);
    }
    const mine = JSON.parse((await callTool(other.mcpToken, 'list_monitors', {})).content[0]!.text);
    assert.deepEqual(
      mine.data.map((m: { name: string }) => m.name),
      ['mine'],
      'the lists are not simply empty',
    );
  });

  it('still answers the owner on the same calls (the fixtures are real)', async () => {
    for (const [name, call] of Object.entries(toolCalls)) {
      if (name === 'fire_trigger' || name.startsWith('create_') || name === 'update_monitor') continue;
      const result = await callTool(owner.mcpToken, name, call.args(ids));
      // No probe agent runs here: the owner's test gets as far as asking for one.
      if (name === 'test_monitor') {
        assert.match(result.content[0]?.text ?? '', /No probe agent of any region is connected/);
        continue;
      }
      assert.notEqual(result.isError, true, `${name}: ${result.content[0]?.text.slice(0, 300)}`);
    }
  });
});
