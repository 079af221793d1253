import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectMcp, toolText } from '../harness/mcp.ts';
import { apiClient } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

const connect = connectMcp;
const text = toolText;

describe('status pages over MCP', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let bob: TestAccount;
  let client: Client;
  let bobs: Client;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    [ada, bob] = await Promise.all([createAccount(cp.db.sql), createAccount(cp.db.sql)]);
    client = await connect(cp.url, ada.mcpToken);
    bobs = await connect(cp.url, bob.mcpToken);
  });
  after(async () => {
    await client.close();
    await bobs.close();
    await cp.stop();
  });

  it('creates, reads, lists, updates and deletes a page, as the token’s user only', async () => {
    const api = apiClient(cp.url, ada.token);
    const monitor = (await api('POST', '/monitors', { project_id: ada.project_id, name: 'Shop', url: 'https://shop.example' })).body.data;
    const created = await client.callTool({
      name: 'create_status_page',
      arguments: {
        project_id: ada.project_id,
        title: 'Shop status',
        groups: [{ name: 'Storefront', components: [{ type: 'monitor', id: monitor.id, display_name: 'Web shop' }] }],
      },
    });
    assert.ok(!created.isError, text(created));
    const page = JSON.parse(text(created));
    assert.equal(page.title, 'Shop status');
    assert.deepEqual(page.groups[0].components[0], {
      type: 'monitor',
      id: monitor.id,
      name: 'Shop',
      display_name: 'Web shop',
      description: '',
      status: 0,
      in_maintenance: false,
    });

    const got = JSON.parse(text(await client.callTool({ name: 'get_status_page', arguments: { id: page.id } })));
    assert.deepEqual(got, page);
    const list = JSON.parse(text(await client.callTool({ name: 'list_status_pages', arguments: {} })));
    assert.deepEqual(
      list.data.map((x: { id: string }) => x.id),
      [page.id],
    );
    assert.equal(JSON.parse(text(await bobs.callTool({ name: 'list_status_pages', arguments: {} }))).meta.total, 0);

    const updated = JSON.parse(
      text(await client.callTool({ name: 'update_status_page', arguments: { id: page.id, changes: { title: 'Status', groups: [] } } })),
    );
    assert.equal(updated.title, 'Status');
    assert.deepEqual(updated.groups, []);

    const foreign = await bobs.callTool({ name: 'delete_status_page', arguments: { id: page.id } });
    assert.equal(foreign.isError, true);
    assert.match(text(foreign), /Not found/);

    const bad = await client.callTool({
      name: 'update_status_page',
      arguments: { id: page.id, changes: { groups: [{ name: 'X', components: [{ type: 'heartbeat', id: monitor.id }] }] } },
    });
    assert.equal(bad.isError, true);
    assert.deepEqual(Object.keys(JSON.parse(text(bad)).errors), ['groups.0.components.0.id']);

    // A private page, in the API's shapes: the password is written, never read back.
    const locked = await client.callTool({
      name: 'update_status_page',
      arguments: { id: page.id, changes: { password: 'correct horse', ip_allowlist: ['10.0.0.0/8'] } },
    });
    assert.ok(!locked.isError, text(locked));
    const lockedPage = JSON.parse(text(locked));
    assert.equal(lockedPage.password_protected, true);
    assert.deepEqual(lockedPage.ip_allowlist, ['10.0.0.0/8']);
    assert.doesNotMatch(text(locked), /correct horse|scrypt/);
    const badRange = await client.callTool({
      name: 'update_status_page',
      arguments: { id: page.id, changes: { ip_allowlist: ['10.0.0.0/8', 'nope'] } },
    });
    assert.equal(badRange.isError, true);
    // Refused by the tool's input schema, naming the entry.
    assert.match(text(badRange), /Give an IP address or a CIDR range.* at changes\.ip_allowlist\[1\]/);

    assert.ok(!(await client.callTool({ name: 'delete_status_page', arguments: { id: page.id } })).isError);
    assert.equal(JSON.parse(text(await client.callTool({ name: 'list_status_pages', arguments: {} }))).meta.total, 0);
  });

  it('lists, writes, updates and posts updates on incidents, as the token’s user only', async () => {
    const api = apiClient(cp.url, ada.token);
    const monitor = (await api('POST', '/monitors', { project_id: ada.project_id, name: 'Shop', url: 'https://shop.example' })).body.data;
    const page = (
      await api('POST', '/status-pages', {
        project_id: ada.project_id,
        title: 'Shop status',
        groups: [{ name: 'Storefront', components: [{ type: 'monitor', id: monitor.id, display_name: 'Web shop' }] }],
      })
    ).body.data;
    const created = await client.callTool({
      name: 'create_status_page_incident',
      arguments: {
        status_page_id: page.id,
        title: 'Checkout fails',
        impact: 'major',
        message: 'Looking into it.',
        components: [{ type: 'monitor', id: monitor.id }],
      },
    });
    assert.ok(!created.isError, text(created));
    const incident = JSON.parse(text(created));
    assert.equal(incident.published, false, 'a draft by default');
    assert.deepEqual(incident.components, [{ type: 'monitor', id: monitor.id, name: 'Web shop' }]);

    const updated = JSON.parse(
      text(
        await client.callTool({
          name: 'update_status_page_incident',
          arguments: { status_page_id: page.id, incident_id: incident.id, changes: { published: true, impact: 'critical' } },
        }),
      ),
    );
    assert.equal(updated.published, true);
    assert.equal(updated.impact, 'critical');
    assert.equal((await api('GET', `/status-pages/${page.id}`)).body.data.overall.level, 'major_outage');

    const posted = JSON.parse(
      text(
        await client.callTool({
          name: 'post_status_page_incident_update',
          arguments: { status_page_id: page.id, incident_id: incident.id, status: 'resolved', message: 'Fixed.' },
        }),
      ),
    );
    assert.equal(posted.status, 'resolved');
    assert.deepEqual(
      posted.updates.map((u: { status: string }) => u.status),
      ['resolved', 'investigating'],
    );

    const listed = JSON.parse(text(await client.callTool({ name: 'list_status_page_incidents', arguments: { status_page_id: page.id } })));
    assert.deepEqual(
      listed.data.map((i: { id: string }) => i.id),
      [incident.id],
    );
    const foreign = await bobs.callTool({ name: 'list_status_page_incidents', arguments: { status_page_id: page.id } });
    assert.equal(foreign.isError, true);
    assert.match(text(foreign), /Not found/);
    const bad = await client.callTool({
      name: 'post_status_page_incident_update',
      arguments: { status_page_id: page.id, incident_id: incident.id, status: 'fixed', message: 'x' },
    });
    assert.equal(bad.isError, true);
  });

  /** A page of Ada's project with one monitor on it. */
  const pageWithMonitor = async () => {
    const api = apiClient(cp.url, ada.token);
    const monitor = (await api('POST', '/monitors', { project_id: ada.project_id, name: 'Shop', url: 'https://shop.example' })).body.data;
    const page = (
      await api('POST', '/status-pages', {
        project_id: ada.project_id,
        title: 'Shop status',
        groups: [{ name: 'Storefront', components: [{ type: 'monitor', id: monitor.id }] }],
      })
    ).body.data;
    return { api, monitor, page };
  };
  const call = async (c: Client, name: string, args: Record<string, unknown>) => {
    const res = await c.callTool({ name, arguments: args });
    assert.ok(!res.isError, `${name}: ${text(res)}`);
    return JSON.parse(text(res));
  };

  it('gets one incident with its timeline, and deletes it', async () => {
    const { api, page } = await pageWithMonitor();
    const incident = await call(client, 'create_status_page_incident', {
      status_page_id: page.id,
      title: 'Slow search',
      message: 'Checking.',
    });
    const ids = { status_page_id: page.id, incident_id: incident.id };
    const got = await call(client, 'get_status_page_incident', ids);
    assert.deepEqual(got, (await api('GET', `/status-pages/${page.id}/incidents/${incident.id}`)).body.data);
    assert.equal(got.title, 'Slow search');
    assert.deepEqual(
      got.updates.map((u: { message: string }) => u.message),
      ['Checking.'],
    );

    const foreign = await bobs.callTool({ name: 'delete_status_page_incident', arguments: ids });
    assert.equal(foreign.isError, true);
    assert.match(text(foreign), /Not found/);
    assert.deepEqual(await call(client, 'delete_status_page_incident', ids), { message: 'Incident deleted successfully' });
    assert.equal((await api('GET', `/status-pages/${page.id}/incidents/${incident.id}`)).status, 404);
    const gone = await client.callTool({ name: 'get_status_page_incident', arguments: ids });
    assert.equal(gone.isError, true);
    assert.match(text(gone), /Not found/);
  });

  it('adds, lists, gets and removes subscribers', async () => {
    const { api, page } = await pageWithMonitor();
    const hook = await call(client, 'add_status_page_subscriber', {
      status_page_id: page.id,
      type: 'webhook',
      url: 'https://hooks.example/status',
      secret: 'a-signing-secret-of-some-length',
    });
    assert.equal(hook.type, 'webhook');
    assert.equal(hook.webhook_host, 'hooks.example');
    assert.equal(hook.webhook_secret_set, true);
    assert.equal(hook.confirmed, true, 'a webhook is active at once');
    const plain = await call(client, 'add_status_page_subscriber', {
      status_page_id: page.id,
      type: 'webhook',
      url: 'https://other.example/in',
    });
    assert.equal(plain.webhook_secret_set, false);

    const all = await call(client, 'list_status_page_subscribers', { status_page_id: page.id });
    assert.equal(all.meta.total, 2);
    assert.deepEqual(
      all.data.map((x: { id: string }) => x.id),
      [hook.id, plain.id],
    );
    assert.equal((await call(client, 'list_status_page_subscribers', { status_page_id: page.id, type: 'email' })).meta.total, 0);

    const got = await call(client, 'get_status_page_subscriber', { status_page_id: page.id, subscriber_id: hook.id });
    assert.deepEqual(got, (await api('GET', `/status-pages/${page.id}/subscribers/${hook.id}`)).body.data);

    const bad = await client.callTool({ name: 'add_status_page_subscriber', arguments: { status_page_id: page.id, type: 'webhook' } });
    assert.equal(bad.isError, true);
    assert.deepEqual(Object.keys(JSON.parse(text(bad)).errors), ['url']);

    assert.deepEqual(await call(client, 'remove_status_page_subscriber', { status_page_id: page.id, subscriber_id: hook.id }), {
      message: 'Subscriber removed successfully',
    });
    assert.equal((await api('GET', `/status-pages/${page.id}/subscribers/${hook.id}`)).status, 404);
    assert.deepEqual(
      (await call(client, 'list_status_page_subscribers', { status_page_id: page.id })).data.map((x: { id: string }) => x.id),
      [plain.id],
    );
  });

  it('creates, gets and deletes the public badge of a monitor or heartbeat', async () => {
    const { api, monitor } = await pageWithMonitor();
    const heartbeat = (await api('POST', '/heartbeats', { project_id: ada.project_id, name: 'backup-job' })).body.data;
    const badge = await call(client, 'create_badge', { type: 'monitor', id: monitor.id });
    assert.equal(badge.id, monitor.id);
    assert.match(badge.slug, /^[A-Za-z0-9_-]{22}$/);
    assert.deepEqual(badge, (await api('GET', `/monitors/${monitor.id}/badge`)).body.data);
    assert.deepEqual(await call(client, 'create_badge', { type: 'monitor', id: monitor.id }), badge, 'one badge per monitor');
    assert.deepEqual(await call(client, 'get_badge', { type: 'monitor', id: monitor.id }), badge);
    const path = new URL(badge.urls.status.json).pathname;
    assert.equal((await fetch(cp.url + path)).status, 200);

    const beat = await call(client, 'create_badge', { type: 'heartbeat', id: heartbeat.id });
    assert.deepEqual(Object.keys(beat.urls), ['status', 'uptime']);

    const foreign = await bobs.callTool({ name: 'get_badge', arguments: { type: 'monitor', id: monitor.id } });
    assert.equal(foreign.isError, true);
    assert.match(text(foreign), /Not found/);
    assert.deepEqual(await call(client, 'delete_badge', { type: 'monitor', id: monitor.id }), { message: 'Badge removed successfully' });
    assert.equal((await fetch(cp.url + path)).status, 404);
    const none = await client.callTool({ name: 'get_badge', arguments: { type: 'monitor', id: monitor.id } });
    assert.equal(none.isError, true);
    assert.match(text(none), /Not found/);
  });
});
