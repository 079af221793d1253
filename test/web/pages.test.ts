import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startWebhookSink } from '../harness/http.ts';
import { csrfOf, webClient, type WebClient } from './client.ts';
import { markChecked, seedResults } from './seed.ts';

describe('dashboard pages', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let bob: TestAccount;
  let web: WebClient;
  let api: Call;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    [ada, bob] = await Promise.all([
      createAccount(cp.db.sql, { email: 'ada@example.test' }),
      createAccount(cp.db.sql, { email: 'bob@example.test' }),
    ]);
    web = webClient(cp.url);
    await web.signIn(ada.email, ada.password);
    api = apiClient(cp.url, ada.token);
  });
  after(() => cp.stop());

  const monitor = async (name = 'Home', extra: object = {}) =>
    (await api('POST', '/monitors', { name, url: 'https://example.com/health', project_id: ada.project_id, ...extra })).body.data;
  const heartbeat = async (name = 'Backup') =>
    (await api('POST', '/heartbeats', { name, project_id: ada.project_id, cron_schedule: '0 3 * * *' })).body.data;

  it('serves every page as text/html; charset=utf-8 under a strict content security policy', async () => {
    const m = await monitor('Pages');
    const h = await heartbeat('Pages');
    await seedResults(cp.db.sql, m.id, { hours: 2 });
    const paths = [
      '/',
      '/app/monitors',
      '/app/monitors/new',
      `/app/monitors/${m.id}`,
      `/app/monitors/${m.id}?range=7d`,
      `/app/monitors/${m.id}/edit`,
      '/app/heartbeats',
      '/app/heartbeats/new',
      `/app/heartbeats/${h.id}`,
      `/app/heartbeats/${h.id}/edit`,
      '/app/triggers',
      '/app/triggers/new',
      '/app/maintenance',
      '/app/maintenance/new',
      '/app/status-pages',
      '/app/status-pages/new',
      '/app/integrations',
      '/app/integrations/new',
      '/app/integrations/new?type=email',
      '/app/settings/tokens',
      '/app/settings/members',
      '/app/settings/project',
    ];
    for (const path of paths) {
      const res = await web.get(path);
      assert.equal(res.status, 200, `${path}: ${res.status}`);
      assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8', path);
      assert.match(res.headers.get('content-security-policy')!, /script-src 'self'/, path);
      assert.equal(res.headers.get('x-frame-options'), 'DENY', path);
      assert.doesNotMatch(res.text, /<script>|\son[a-z]+="|style="/i, `${path} has inline script or style`);
      assert.doesNotMatch(res.text, /https?:\/\/(cdn|unpkg|fonts)\./, `${path} loads from a CDN`);
    }
    const css = await web.get('/assets/app.css');
    assert.equal(css.headers.get('content-type'), 'text/css; charset=utf-8');
    assert.match(css.headers.get('cache-control')!, /immutable/);
  });

  it('answers an unknown dashboard page with an HTML 404', async () => {
    const res = await web.get('/app/nothing-here');
    assert.equal(res.status, 404);
    assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
  });

  it('escapes user text wherever it is shown', async () => {
    const evil = '<script>alert("x")</script> & <b>';
    const m = await monitor(evil);
    const h = await heartbeat(evil);
    for (const path of ['/', '/app/monitors', `/app/monitors/${m.id}`, '/app/heartbeats', `/app/heartbeats/${h.id}`]) {
      const res = await web.get(path);
      assert.doesNotMatch(res.text, /<script>alert/, path);
      assert.match(res.text, /&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt; &amp; &lt;b&gt;/, path);
    }
  });

  it("creates and edits a monitor through its form, with the API's rules and field errors", async () => {
    const bad = await web.submit('/app/monitors/new', '/app/monitors', {
      name: '',
      url: 'ftp://example.com',
      _method: 'GET',
      valid_http_codes: '200-299, 7',
      interval: '60',
    });
    assert.equal(bad.status, 422);
    assert.match(bad.text, /This field is required/);
    assert.match(bad.text, /Use codes and ranges/);
    const ok = await web.submit('/app/monitors/new', '/app/monitors', {
      name: 'Form',
      url: 'https://example.org',
      _method: 'POST',
      valid_http_codes: '200-204, 301',
      interval: '300',
      timeout: '20',
      regions: 'eu-west, us-east',
      basic_auth_username: 'probe',
      basic_auth_password: 's3cret',
      follow_redirects: 'on',
    });
    assert.equal(ok.status, 303);
    const id = ok.location!.split('/').at(-1)!;
    const created = (await api('GET', `/monitors/${id}`)).body.data;
    assert.deepEqual(
      {
        method: created.method,
        codes: created.valid_http_codes,
        interval: created.interval,
        timeout: created.timeout,
        regions: created.regions,
        user: created.basic_auth_username,
      },
      { method: 'POST', codes: [200, 201, 202, 203, 204, 301], interval: 300, timeout: 20, regions: ['eu-west', 'us-east'], user: 'probe' },
    );
    const edited = await web.submit(`/app/monitors/${id}/edit`, `/app/monitors/${id}/edit`, {
      name: 'Form edited',
      url: 'https://example.org',
      _method: 'GET',
      valid_http_codes: '200',
      interval: '60',
      timeout: '',
      regions: '',
      basic_auth_username: '',
    });
    assert.equal(edited.status, 303);
    const after = (await api('GET', `/monitors/${id}`)).body.data;
    assert.equal(after.name, 'Form edited');
    assert.equal(after.regions, null);
    assert.equal(after.timeout, 20, 'an empty timeout keeps the stored one');
    const [row] = await cp.db.sql<{ sealed: string | null }[]>`select basic_auth_password_sealed as sealed from monitors where id = ${id}`;
    assert.ok(row!.sealed, 'an empty password field keeps the stored password');
  });

  it("edits a monitor's tags from its form, with the API's rules, and shows them", async () => {
    const fields = { name: 'Tagged', url: 'https://example.org', _method: 'GET', valid_http_codes: '200', interval: '60' };
    const created = await web.submit('/app/monitors/new', '/app/monitors', { ...fields, tags: 'Prod, eu west , prod' });
    assert.equal(created.status, 303);
    const id = created.location!.split('/').at(-1)!;
    assert.deepEqual((await api('GET', `/monitors/${id}`)).body.data.tags, ['prod', 'eu west']);
    const form = await web.get(`/app/monitors/${id}/edit`);
    assert.match(form.text, /name="tags"[^>]*value="prod, eu west"/);
    const bad = await web.submit(`/app/monitors/${id}/edit`, `/app/monitors/${id}/edit`, { ...fields, tags: 'ok, a/b' });
    assert.equal(bad.status, 422);
    assert.match(bad.text, /This field takes a tag: 1 to 32 letters/);
    const list = await web.get('/app/monitors?tag=eu+west');
    assert.match(list.text, new RegExp(`data-monitor="${id}"`));
    assert.match(list.text, /<a class="tag" href="\/app\/monitors\?page=1&amp;tag=prod">prod<\/a>/);
    const cleared = await web.submit(`/app/monitors/${id}/edit`, `/app/monitors/${id}/edit`, { ...fields, tags: '' });
    assert.equal(cleared.status, 303);
    assert.deepEqual((await api('GET', `/monitors/${id}`)).body.data.tags, []);
  });

  it('pauses, resumes and deletes a monitor from its page', async () => {
    const m = await monitor('Toggle');
    const page = `/app/monitors/${m.id}`;
    assert.equal((await web.submit(page, `${page}/pause`, {})).status, 303);
    assert.equal((await api('GET', page.replace('/app', ''))).body.data.status, 3);
    assert.match((await web.get(page)).text, /paused: no checks/);
    await web.submit(page, `${page}/resume`, {});
    assert.equal((await api('GET', `/monitors/${m.id}`)).body.data.active, true);
    const del = await web.submit(page, `${page}/delete`, {});
    assert.equal(del.location, '/app/monitors');
    assert.equal((await api('GET', `/monitors/${m.id}`)).status, 404);
  });

  it('creates a heartbeat with a period and pauses it', async () => {
    const res = await web.submit('/app/heartbeats/new', '/app/heartbeats', {
      name: 'Worker',
      schedule_kind: 'period',
      period: '300',
      cron_schedule: '',
      timezone: 'UTC',
      grace_period: '120',
    });
    assert.equal(res.status, 303);
    const id = res.location!.split('/').at(-1)!;
    const hb = (await api('GET', `/heartbeats/${id}`)).body.data;
    assert.equal(hb.period, 300);
    assert.equal(hb.cron_schedule, null);
    const page = await web.get(`/app/heartbeats/${id}`);
    assert.ok(page.text.includes(hb.ping_url) && page.text.includes(hb.start_url) && page.text.includes(hb.fail_url));
    await web.submit(`/app/heartbeats/${id}`, `/app/heartbeats/${id}/pause`, {});
    assert.equal((await api('GET', `/heartbeats/${id}`)).body.data.status, 'paused');
    const badCron = await web.submit('/app/heartbeats/new', '/app/heartbeats', {
      name: 'Bad',
      schedule_kind: 'cron',
      cron_schedule: '* * *',
      timezone: 'UTC',
      grace_period: '120',
    });
    assert.equal(badCron.status, 422);
    assert.match(badCron.text, /This field is not a valid cron expression/);
  });

  it('shows resources of other tenants as not found, and changes none of them', async () => {
    const theirs = (
      await apiClient(cp.url, bob.token)('POST', '/monitors', { name: 'Bob', url: 'https://bob.example', project_id: bob.project_id })
    ).body.data;
    assert.equal((await web.get(`/app/monitors/${theirs.id}`)).status, 404);
    assert.equal((await web.get(`/app/monitors/${theirs.id}?fragment=1`)).status, 404);
    assert.equal((await web.submit('/', `/app/monitors/${theirs.id}/pause`, {})).status, 404);
    assert.equal((await web.submit('/', `/app/monitors/${theirs.id}/badge`, {})).status, 404);
    assert.equal((await web.get('/app/monitors/not-a-uuid')).status, 404);
    assert.equal((await apiClient(cp.url, bob.token)('GET', `/monitors/${theirs.id}`)).body.data.active, true);
    const sw = await web.submit('/', '/app/switch', { project_id: bob.project_id });
    assert.equal(sw.status, 403);
  });

  it('updates statuses through a live fragment without the page around it', async () => {
    const m = await monitor('Live');
    const before = await web.get('/app/monitors?fragment=1');
    assert.doesNotMatch(before.text, /<html/);
    assert.match(before.text, new RegExp(`data-monitor="${m.id}">\\s*<td><span class="pill pending"`));
    await markChecked(cp.db.sql, m.id, 2);
    const afterDown = await web.get('/app/monitors?fragment=1');
    assert.match(afterDown.text, new RegExp(`data-monitor="${m.id}">\\s*<td><span class="pill down"`));
    const page = await web.get('/app/monitors');
    assert.match(page.text, /data-live="\/app\/monitors\?fragment=1&amp;page=1"/);
  });

  it('creates API tokens, shows each once, and revokes one for the next request', async () => {
    const created = await web.submit('/app/settings/tokens', '/app/settings/tokens', { name: 'deploy-bot' });
    assert.equal(created.status, 201);
    assert.equal(created.headers.get('cache-control'), 'no-store');
    const token = /data-testid="token-value">(upt_[^<]+)</.exec(created.text)![1]!;
    const bot = apiClient(cp.url, token);
    assert.equal((await bot('GET', '/projects')).status, 200);
    const list = await web.get('/app/settings/tokens');
    assert.ok(!list.text.includes(token), 'the full token is never shown again');
    assert.match(list.text, /data-token="deploy-bot"/);
    const dup = await web.post('/app/settings/tokens', { _csrf: csrfOf(list.text), name: 'deploy-bot' });
    assert.equal(dup.status, 409);
    const [row] = await cp.db.sql<{ id: string }[]>`select id from api_tokens where name = 'deploy-bot' and revoked_at is null`;
    const revoked = await web.post(`/app/settings/tokens/${row!.id}/revoke`, { _csrf: csrfOf(list.text) });
    assert.equal(revoked.status, 303);
    assert.equal((await bot('GET', '/projects')).status, 401);
  });

  it('creates, rotates and revokes the MCP token', async () => {
    const first = await web.submit('/app/settings/tokens', '/app/settings/tokens/mcp', {});
    const one = /data-testid="token-value">(uptm_[^<]+)</.exec(first.text)![1]!;
    const second = await web.submit('/app/settings/tokens', '/app/settings/tokens/mcp', {});
    const two = /data-testid="token-value">(uptm_[^<]+)</.exec(second.text)![1]!;
    assert.notEqual(one, two);
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const mcp = (token: string) =>
      fetch(`${cp.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(init),
      });
    assert.equal((await mcp(one)).status, 401, 'rotation retires the old token');
    assert.equal((await mcp(two)).status, 200);
    await web.submit('/app/settings/tokens', '/app/settings/tokens/mcp/revoke', {});
    assert.equal((await mcp(two)).status, 401);
  });

  it('lets an owner add and remove members, and a member do neither', async () => {
    const carol = await createAccount(cp.db.sql, { email: 'carol@example.test' });
    const added = await web.submit('/app/settings/members', '/app/settings/members', { email: 'CAROL@example.test' });
    assert.equal(added.status, 303);
    const unknown = await web.submit('/app/settings/members', '/app/settings/members', { email: 'nobody@example.test' });
    assert.equal(unknown.status, 422);
    assert.match(unknown.text, /No account uses nobody@example.test/);
    const again = await web.submit('/app/settings/members', '/app/settings/members', { email: 'carol@example.test' });
    assert.equal(again.status, 409);

    const carolWeb = webClient(cp.url);
    await carolWeb.signIn(carol.email, carol.password);
    const switched = await carolWeb.submit('/', '/app/switch', { project_id: ada.project_id });
    assert.equal(switched.status, 303);
    const members = await carolWeb.get('/app/settings/members');
    assert.match(members.text, /Only owners of/);
    assert.doesNotMatch(members.text, /Add member/);
    const m = await monitor('Shared');
    assert.equal((await carolWeb.get(`/app/monitors/${m.id}`)).status, 200, "a member sees the organization's projects");
    const byMember = await carolWeb.post('/app/settings/members', { _csrf: csrfOf(members.text), email: 'bob@example.test' });
    assert.equal(byMember.status, 403);
    const removeByMember = await carolWeb.post(`/app/settings/members/${ada.user_id}/remove`, { _csrf: csrfOf(members.text) });
    assert.equal(removeByMember.status, 403);

    const removed = await web.submit('/app/settings/members', `/app/settings/members/${carol.user_id}/remove`, {});
    assert.equal(removed.status, 303);
    assert.equal((await carolWeb.get(`/app/monitors/${m.id}`)).status, 404, 'removal holds from the next request');
    const ownerStays = await web.submit('/app/settings/members', `/app/settings/members/${ada.user_id}/remove`, {});
    assert.equal(ownerStays.status, 404, 'owners are not removed this way');
  });

  it('creates a project and switches between projects', async () => {
    const created = await web.submit('/app/settings/project', '/app/settings/project/new', {
      new_name: 'Staging',
      organization_id: ada.organization_id,
    });
    assert.equal(created.status, 303);
    const home = await web.get('/');
    assert.match(home.text, /<strong>Staging<\/strong>/);
    const back = await web.post(
      '/app/switch',
      { _csrf: csrfOf(home.text), project_id: ada.project_id },
      { referer: `${cp.url}/app/heartbeats/123` },
    );
    assert.equal(back.location, '/app/heartbeats');
    assert.match((await web.get('/')).text, /<strong>Default<\/strong>/);
  });

  it('publishes a status page made on the status pages page, at an unguessable address without private details, until deleted', async () => {
    const m = await monitor('Public site', { url: 'https://secret-host.internal/health' });
    await markChecked(cp.db.sql, m.id, 1);
    const settings = await web.get('/app/settings/project');
    assert.doesNotMatch(settings.text, /\/status\//);
    assert.match(settings.text, /href="\/app\/status-pages\/new"/, 'the settings card leads to the status pages');
    const created = await web.submit('/app/status-pages/new', '/app/status-pages', { title: 'Public', description: '' });
    assert.equal(created.status, 303);
    const listed = await web.get('/app/status-pages');
    const slug = /href="\/status\/([A-Za-z0-9_-]{22})"/.exec(listed.text)![1]!;
    const id = /data-status-page="([0-9a-f-]{36})"/.exec(listed.text)![1]!;
    assert.match((await web.get('/app/settings/project')).text, new RegExp(`href="/status/${slug}"`), 'and lists them');
    const visitor = webClient(cp.url);
    const page = await visitor.get(`/status/${slug}`);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.match(page.text, /Public site/);
    assert.match(page.text, /<svg class="bars"/);
    assert.doesNotMatch(page.text, /secret-host|ada@example\.test/);
    assert.equal((await visitor.get('/status/AAAAAAAAAAAAAAAAAAAAAA')).status, 404);

    const moved = await web.submit('/app/status-pages', `/app/status-pages/${id}/address`, {});
    assert.equal(moved.status, 303);
    assert.equal((await visitor.get(`/status/${slug}`)).status, 404, 'a new address retires the old one');
    await web.submit('/app/status-pages', `/app/status-pages/${id}/delete`, {});
    assert.doesNotMatch((await web.get('/app/settings/project')).text, /\/status\//);
    assert.doesNotMatch((await web.get('/app/status-pages')).text, /data-status-page=/);
  });

  it('serves status badges of monitors and heartbeats at unguessable addresses until removed', async () => {
    const m = await monitor('Badge <me>');
    await markChecked(cp.db.sql, m.id, 1);
    const page = `/app/monitors/${m.id}`;
    await web.submit(page, `${page}/badge`, {});
    const card = (await web.get(page)).text;
    const slug = /src="\/badge\/([A-Za-z0-9_-]{22})\/status\.svg"/.exec(card)![1]!;
    // Each kind with its image and snippets to copy, and the Shields endpoint.
    assert.deepEqual(
      [...card.matchAll(/data-badge="([a-z]+)"/g)].map((x) => x[1]),
      ['status', 'uptime', 'response'],
    );
    const publicUrl = `${cp.config.PUBLIC_URL}/badge/${slug}`;
    assert.ok(card.includes(`data-copy="![Badge &lt;me&gt; status](${publicUrl}/status.svg)"`), 'Markdown of the status badge');
    assert.ok(
      card.includes(
        `data-copy="&lt;img src=&quot;${publicUrl}/uptime.svg&quot; alt=&quot;Badge &lt;me&gt; uptime over 30 days&quot; height=&quot;20&quot;&gt;"`,
      ),
      'HTML of the uptime badge',
    );
    assert.ok(card.includes(`https://img.shields.io/endpoint?url=${encodeURIComponent(`${publicUrl}/status.json`)}`));
    const svg = await fetch(`${cp.url}/badge/${slug}.svg`);
    assert.equal(svg.status, 200);
    assert.equal(svg.headers.get('content-type'), 'image/svg+xml; charset=utf-8');
    assert.match(svg.headers.get('cache-control')!, /no-cache/);
    const body = await svg.text();
    assert.match(body, /Badge &lt;me&gt;/);
    assert.match(body, />up · 100%</);
    for (const file of ['status.svg', 'uptime.svg', 'response.svg', 'status.json']) {
      assert.equal((await fetch(`${cp.url}/badge/${slug}/${file}`)).status, 200, file);
    }

    const h = await heartbeat('Nightly');
    await web.submit(`/app/heartbeats/${h.id}`, `/app/heartbeats/${h.id}/badge`, {});
    const hcard = (await web.get(`/app/heartbeats/${h.id}`)).text;
    const hslug = /src="\/badge\/([A-Za-z0-9_-]{22})\/status\.svg"/.exec(hcard)![1]!;
    assert.deepEqual(
      [...hcard.matchAll(/data-badge="([a-z]+)"/g)].map((x) => x[1]),
      ['status', 'uptime'],
      'a heartbeat has no response time',
    );
    assert.match(await (await fetch(`${cp.url}/badge/${hslug}.svg`)).text(), />new</);
    assert.match(await (await fetch(`${cp.url}/badge/${hslug}/status.svg`)).text(), /<title>Nightly: pending<\/title>/);

    await web.submit(page, `${page}/badge/delete`, {});
    assert.equal((await fetch(`${cp.url}/badge/${slug}.svg`)).status, 404);
    assert.equal((await fetch(`${cp.url}/badge/${slug}/status.svg`)).status, 404);
  });

  it('creates a webhook integration, sends a test to it and shows the delivery', async () => {
    const sink = await startWebhookSink();
    try {
      const bad = await web.submit('/app/integrations/new?type=webhook', '/app/integrations?type=webhook', {
        name: 'Hook',
        'config.url': 'not a url',
      });
      assert.equal(bad.status, 422);
      const created = await web.submit('/app/integrations/new?type=webhook', '/app/integrations?type=webhook', {
        name: 'Ops hook',
        'config.url': `${sink.url}/hook`,
        'config.headers': 'X-Team: ops',
      });
      assert.equal(created.status, 303);
      const page = created.location!;
      const detail = await web.get(page);
      assert.doesNotMatch(detail.text, new RegExp(`${sink.url}/hook`), 'the secret URL is not shown');
      await web.submit(page, `${page}/test`, {});
      const [request] = await sink.waitForRequests(1);
      assert.equal(request!.headers['x-team'], 'ops');
      const after = await web.get(page);
      assert.match(after.text, /Test message delivered/);
      assert.match(after.text, /integration\.test/);
      assert.match(after.text, /pill up">Delivered/);
    } finally {
      await sink.close();
    }
  });

  it('links integrations to a monitor from its form', async () => {
    const hook = await api('POST', '/integrations', {
      project_id: ada.project_id,
      name: 'Linked',
      type: 'slack',
      config: { url: 'https://hooks.slack.example/x' },
    });
    const res = await web.submit('/app/monitors/new', '/app/monitors', {
      name: 'With alerts',
      url: 'https://example.net',
      _method: 'GET',
      valid_http_codes: '200',
      interval: '60',
      integration_ids: hook.body.data.id,
    });
    const id = res.location!.split('/').at(-1)!;
    assert.deepEqual((await api('GET', `/monitors/${id}`)).body.data.integration_ids, [hook.body.data.id]);
  });

  it('creates a protected trigger, shows its token once and lists its calls', async () => {
    const created = await web.submit('/app/triggers/new', '/app/triggers', {
      name: 'Deploys',
      default_message: 'Deployed',
      token_protected: 'on',
      rate_max: '10',
      rate_per: 'minute',
    });
    assert.equal(created.status, 201);
    const token = /data-testid="trigger-token">([^<]+)</.exec(created.text)![1]!;
    const url = /data-testid="trigger-url">([^<]+)</.exec(created.text)![1]!;
    const id = url.split('/').at(-1)!;
    const fire = await fetch(`${cp.url}/api/notify/${id}?token=${token}&message=${encodeURIComponent('v2 <live>')}`, { method: 'POST' });
    assert.equal(fire.status, 202);
    const page = await web.get(`/app/triggers/${id}`);
    assert.ok(!page.text.includes(token), 'the token is shown once');
    assert.match(page.text, /v2 &lt;live&gt;/);
    assert.match(page.text, /10 per minute/);
    const list = await web.get('/app/triggers');
    assert.match(list.text, /Deploys/);
  });

  it('keeps the dashboard and MCP routes out of the OpenAPI document', async () => {
    const doc = (await api('GET', '/openapi.json')).body;
    const paths = Object.keys(doc.paths);
    assert.ok(paths.includes('/monitors'));
    assert.deepEqual(
      // The public status page is /status/<slug>; /status-pages is the API's.
      paths.filter((p) => /^\/(app|status|badge|assets|mcp)(\/|$)|^\/$/.test(p)),
      [],
    );
  });
});
