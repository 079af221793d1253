import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectMcp, toolText } from '../harness/mcp.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

const connect = connectMcp;
const text = toolText;

describe('maintenance windows over MCP', () => {
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

  it('creates, lists, updates and deletes a window, as the token’s user only', async () => {
    const created = await client.callTool({
      name: 'create_maintenance_window',
      arguments: {
        project_id: ada.project_id,
        name: 'Sunday patching',
        cron: '0 3 * * 0',
        duration_seconds: 3600,
        timezone: 'Europe/Berlin',
        whole_project: true,
      },
    });
    assert.ok(!created.isError, text(created));
    const w = JSON.parse(text(created));
    assert.equal(w.kind, 'recurring');
    assert.equal(w.timezone, 'Europe/Berlin');

    const list = JSON.parse(text(await client.callTool({ name: 'list_maintenance_windows', arguments: {} })));
    assert.deepEqual(
      list.data.map((x: { id: string }) => x.id),
      [w.id],
    );
    assert.equal(JSON.parse(text(await bobs.callTool({ name: 'list_maintenance_windows', arguments: {} }))).meta.total, 0);

    const updated = JSON.parse(
      text(await client.callTool({ name: 'update_maintenance_window', arguments: { id: w.id, changes: { active: false } } })),
    );
    assert.equal(updated.active, false);
    assert.equal(updated.current_or_next, null);

    const foreign = await bobs.callTool({ name: 'delete_maintenance_window', arguments: { id: w.id } });
    assert.equal(foreign.isError, true);
    assert.match(text(foreign), /Not found/);

    const bad = await client.callTool({
      name: 'create_maintenance_window',
      arguments: { project_id: ada.project_id, name: 'x', whole_project: true },
    });
    assert.equal(bad.isError, true);
    assert.match(text(bad), /starts_at/);

    assert.ok(!(await client.callTool({ name: 'delete_maintenance_window', arguments: { id: w.id } })).isError);
    assert.equal(JSON.parse(text(await client.callTool({ name: 'list_maintenance_windows', arguments: {} }))).meta.total, 0);
  });
});
