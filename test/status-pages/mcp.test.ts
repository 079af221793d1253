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
});
