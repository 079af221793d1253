import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectMcp } from '../harness/mcp.ts';
import { apiClient } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { markChecked, seedIncident, seedResults } from '../web/seed.ts';

const connect = connectMcp;

/** The JSON a tool answered with (tools answer one text item holding JSON). */
function json(result: Awaited<ReturnType<Client['callTool']>>): any {
  const content = result.content as { type: string; text: string }[];
  assert.equal(content[0]?.type, 'text');
  return JSON.parse(content[0]!.text);
}

describe('the MCP endpoint', () => {
  let cp: TestControlPlane;
  let account: TestAccount;
  let other: TestAccount;
  let client: Client;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    [account, other] = await Promise.all([createAccount(cp.db.sql), createAccount(cp.db.sql)]);
    client = await connect(cp.url, account.mcpToken);
  });
  after(async () => {
    await client?.close();
    await cp.stop();
  });

  it('advertises in initialize only what it does: tools, without list-change notifications it never sends', async () => {
    const res = await fetch(`${cp.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${account.mcpToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
      }),
    });
    assert.equal(res.status, 200);
    const { result } = (await res.json()) as { result: { capabilities: Record<string, unknown> } };
    // Stateless: a server lives for one request and has no stream to notify on, and its tool list
    // is fixed. A client told `listChanged: true` would wait for notifications that never come.
    assert.deepEqual(result.capabilities, { tools: { listChanged: false } });
    assert.deepEqual(client.getServerCapabilities(), result.capabilities);
  });

  it('lists its tools with input schemas and read or write annotations', async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    const reads = [
      'list_projects',
      'project_status',
      'list_monitors',
      'get_monitor',
      'monitor_results',
      'monitor_incidents',
      'list_regions',
      'list_heartbeats',
      'get_heartbeat',
      'list_heartbeat_pings',
      'list_triggers',
      'list_maintenance_windows',
      'list_status_pages',
      'get_status_page',
      'list_status_page_incidents',
      'get_status_page_incident',
      'list_status_page_subscribers',
      'get_status_page_subscriber',
      'get_badge',
      'list_alerts',
      'preview_integration',
      'test_monitor',
    ];
    const writes = [
      'create_monitor',
      'update_monitor',
      'pause_monitor',
      'resume_monitor',
      'create_heartbeat',
      'update_heartbeat',
      'update_project',
      'fire_trigger',
      'create_maintenance_window',
      'update_maintenance_window',
      'delete_maintenance_window',
      'create_status_page',
      'update_status_page',
      'delete_status_page',
      'create_status_page_incident',
      'update_status_page_incident',
      'post_status_page_incident_update',
      'delete_status_page_incident',
      'add_status_page_subscriber',
      'remove_status_page_subscriber',
      'create_badge',
      'delete_badge',
      'acknowledge_alert',
      'snooze_alert',
      'snooze_monitor',
      'snooze_heartbeat',
    ];
    assert.deepEqual([...byName.keys()].sort(), [...reads, ...writes].sort());
    for (const name of reads) assert.equal(byName.get(name)!.annotations?.readOnlyHint, true, name);
    for (const name of writes) assert.equal(byName.get(name)!.annotations?.readOnlyHint, false, name);
    assert.equal(byName.get('update_monitor')!.annotations?.destructiveHint, true);
    assert.equal(byName.get('create_monitor')!.annotations?.destructiveHint, false);
    assert.equal(byName.get('delete_status_page')!.annotations?.destructiveHint, true);
    assert.equal(byName.get('create_status_page')!.annotations?.destructiveHint, false);
    assert.equal(byName.get('update_status_page_incident')!.annotations?.destructiveHint, true);
    assert.equal(byName.get('post_status_page_incident_update')!.annotations?.destructiveHint, false);
    const incident = byName.get('create_status_page_incident')!.inputSchema as any;
    assert.deepEqual([...incident.required].sort(), ['message', 'status_page_id', 'title']);
    assert.equal(incident.properties.message.maxLength, 10_000);
    assert.equal(byName.get('fire_trigger')!.annotations?.openWorldHint, true);

    // The REST API's schemas: the same fields, bounds and defaults.
    const create = byName.get('create_monitor')!.inputSchema as any;
    assert.deepEqual([...create.required].sort(), ['name', 'project_id', 'url']);
    assert.equal(create.properties.name.maxLength, 255);
    assert.deepEqual(create.properties._method.enum, ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']);
    assert.equal(create.properties.valid_http_codes.items.minimum, 100);
    assert.equal(create.properties.confirm_down.maximum, 10);
    const quorum = create.properties.quorum;
    assert.equal((quorum.anyOf ?? [quorum]).find((s: { type?: string }) => s.type !== 'null').minimum, 1);
    const heartbeat = byName.get('create_heartbeat')!.inputSchema as any;
    assert.equal(heartbeat.properties.grace_period.minimum, 60);
    assert.equal(heartbeat.properties.grace_period.maximum, 86400);
  });

  it('creates, reads, updates, pauses and resumes a monitor, as the REST API sees it', async () => {
    const created = json(
      await client.callTool({
        name: 'create_monitor',
        arguments: { name: 'Home', url: 'https://example.com', project_id: account.project_id },
      }),
    );
    assert.equal(created.name, 'Home');
    assert.equal(created.method, 'GET');
    assert.equal(created.status, 0);

    const rest = apiClient(cp.url, account.token);
    assert.equal((await rest('GET', `/monitors/${created.id}`)).body.data.name, 'Home');

    const got = json(await client.callTool({ name: 'get_monitor', arguments: { id: created.id } }));
    assert.equal(got.id, created.id);

    const updated = json(
      await client.callTool({ name: 'update_monitor', arguments: { id: created.id, changes: { name: 'Home page', interval: 120 } } }),
    );
    assert.equal(updated.name, 'Home page');
    assert.equal(updated.interval, 120);
    assert.equal(updated.url, 'https://example.com', 'fields left out are kept');

    const paused = json(await client.callTool({ name: 'pause_monitor', arguments: { id: created.id } }));
    assert.equal(paused.active, false);
    assert.equal(paused.status, 3);
    assert.equal((await rest('GET', `/monitors/${created.id}`)).body.data.active, false);
    const resumed = json(await client.callTool({ name: 'resume_monitor', arguments: { id: created.id } }));
    assert.equal(resumed.active, true);

    const list = json(await client.callTool({ name: 'list_monitors', arguments: { project_id: account.project_id } }));
    assert.deepEqual(
      list.data.map((m: { id: string }) => m.id),
      [created.id],
    );
    assert.equal(list.meta.total, 1);
  });

  it('takes and returns tags as the REST API does, and lists the monitors carrying one', async () => {
    const tagged = json(
      await client.callTool({
        name: 'create_monitor',
        arguments: { name: 'Tagged', url: 'https://example.com', project_id: account.project_id, tags: ['Prod', 'eu west'] },
      }),
    );
    assert.deepEqual(tagged.tags, ['prod', 'eu west']);
    const retagged = json(await client.callTool({ name: 'update_monitor', arguments: { id: tagged.id, changes: { tags: ['edge'] } } }));
    assert.deepEqual(retagged.tags, ['edge']);
    const list = json(await client.callTool({ name: 'list_monitors', arguments: { tag: 'edge' } }));
    assert.deepEqual(
      list.data.map((m: { id: string }) => m.id),
      [tagged.id],
    );
    const bad = await client.callTool({
      name: 'create_monitor',
      arguments: { name: 'Bad', url: 'https://example.com', project_id: account.project_id, tags: ['a/b'] },
    });
    assert.equal(bad.isError, true);
    assert.match(JSON.stringify(bad.content), /tags/);
    await apiClient(cp.url, account.token)('DELETE', `/monitors/${tagged.id}`);
  });

  it('creates monitors of other types with settings and assertions, the shapes of the REST API', async () => {
    const dns = json(
      await client.callTool({
        name: 'create_monitor',
        arguments: {
          name: 'Mail DNS',
          type: 'dns',
          url: 'dns://example.com',
          project_id: account.project_id,
          settings: { record_type: 'MX' },
          assertions: [{ source: 'dns_answer', operator: 'contains', target: '10 mx.example.com' }],
        },
      }),
    );
    assert.equal(dns.type, 'dns');
    assert.equal(dns.settings.record_type, 'MX');
    assert.equal(dns.assertions[0].severity, 'down');
    const bad = await client.callTool({
      name: 'create_monitor',
      arguments: { name: 'Bad', type: 'tcp', url: 'tcp://db.example.com', project_id: account.project_id },
    });
    assert.equal(bad.isError, true);
    assert.match(JSON.stringify(bad.content), /url/);
    // No agent runs here: the test gets as far as asking for one.
    const tested = await client.callTool({ name: 'test_monitor', arguments: { id: dns.id, region: 'nowhere' } });
    assert.equal(tested.isError, true);
    assert.match(JSON.stringify(tested.content), /No probe agent of region nowhere is connected/);
    await apiClient(cp.url, account.token)('DELETE', `/monitors/${dns.id}`);
  });

  it('reports recent results and incidents of a monitor', async () => {
    const m = json(
      await client.callTool({
        name: 'create_monitor',
        arguments: { name: 'API', url: 'https://api.example.com', project_id: account.project_id },
      }),
    );
    await seedResults(cp.db.sql, m.id, { hours: 1, stepMinutes: 5, failEvery: 4 });
    await seedIncident(cp.db.sql, m.id, new Date(Date.now() - 600_000), null);
    const results = json(await client.callTool({ name: 'monitor_results', arguments: { id: m.id, limit: 5 } }));
    assert.equal(results.length, 5);
    assert.ok(results.every((r: { timings: { total: number } }) => typeof r.timings.total === 'number'));
    const east = json(await client.callTool({ name: 'monitor_results', arguments: { id: m.id, region: 'us-east', limit: 50 } }));
    assert.ok(east.length > 0 && east.every((r: { region: string }) => r.region === 'us-east'));
    const incidents = json(await client.callTool({ name: 'monitor_incidents', arguments: { id: m.id } }));
    assert.equal(incidents.length, 1);
    assert.equal(incidents[0].ended_at, null);
  });

  it('lists, reads and creates heartbeats', async () => {
    const created = json(
      await client.callTool({
        name: 'create_heartbeat',
        arguments: { name: 'Backup', project_id: account.project_id, cron_schedule: '0 3 * * *', grace_period: 600 },
      }),
    );
    assert.equal(created.status, 'new');
    assert.equal(created.ping_url, `${cp.config.PING_BASE_URL}/heartbeat/${created.id}`);
    const got = json(await client.callTool({ name: 'get_heartbeat', arguments: { id: created.id } }));
    assert.equal(got.cron_schedule, '0 3 * * *');
    const list = json(await client.callTool({ name: 'list_heartbeats', arguments: {} }));
    assert.ok(list.data.some((h: { id: string }) => h.id === created.id));
    // It may depend on a monitor, set as the REST API sets it.
    const parent = json(
      await client.callTool({
        name: 'create_monitor',
        arguments: { name: 'Database', url: 'https://db.example', project_id: account.project_id },
      }),
    );
    const updated = json(
      await client.callTool({
        name: 'update_heartbeat',
        arguments: { id: created.id, changes: { depends_on: [{ type: 'monitor', id: parent.id }] } },
      }),
    );
    assert.deepEqual(updated.depends_on, [{ type: 'monitor', id: parent.id }]);
    const ruled = json(
      await client.callTool({
        name: 'update_heartbeat',
        arguments: {
          id: created.id,
          changes: { max_duration: 3600, alert_after_failures: 2, output_rules: [{ match: 'contains', value: 'ERROR', outcome: 'fail' }] },
        },
      }),
    );
    assert.deepEqual([ruled.max_duration, ruled.alert_after_failures, ruled.output_rules[0].value], [3600, 2, 'ERROR']);
    const pings = json(await client.callTool({ name: 'list_heartbeat_pings', arguments: { id: created.id } }));
    assert.deepEqual(pings, { data: [], meta: { current_page: 1, per_page: 25, total: 0 } });
    const badRule = await client.callTool({
      name: 'update_heartbeat',
      arguments: { id: created.id, changes: { output_rules: [{ match: 'regex', value: '(', outcome: 'fail' }] } },
    });
    assert.equal(badRule.isError, true);
    assert.match((badRule.content as { text: string }[])[0]!.text, /output_rules\[0\]\.value/);
    const refused = await client.callTool({
      name: 'update_heartbeat',
      arguments: { id: created.id, changes: { depends_on: [{ type: 'monitor', id: created.id }] } },
    });
    assert.equal(refused.isError, true);
    assert.match((refused.content as { text: string }[])[0]!.text, /depends_on\.0/);
  });

  it("sets a project's alert grouping", async () => {
    const updated = json(
      await client.callTool({ name: 'update_project', arguments: { id: account.project_id, changes: { alert_group_seconds: 30 } } }),
    );
    assert.equal(updated.alert_group_seconds, 30);
    const refused = await client.callTool({
      name: 'update_project',
      arguments: { id: account.project_id, changes: { alert_group_seconds: 2 } },
    });
    assert.equal(refused.isError, true);
    assert.match((refused.content as { text: string }[])[0]!.text, /alert_group_seconds/);
    json(await client.callTool({ name: 'update_project', arguments: { id: account.project_id, changes: { alert_group_seconds: null } } }));
  });

  it('summarises the status of a project', async () => {
    const down = json(
      await client.callTool({
        name: 'create_monitor',
        arguments: { name: 'Shop', url: 'https://shop.example.com', project_id: account.project_id },
      }),
    );
    await markChecked(cp.db.sql, down.id, 2);
    await seedIncident(cp.db.sql, down.id, new Date(Date.now() - 60_000), null, 'status 502');
    const projects = json(await client.callTool({ name: 'list_projects', arguments: {} }));
    assert.deepEqual(
      projects.map((p: { id: string }) => p.id),
      [account.project_id],
    );
    const status = json(await client.callTool({ name: 'project_status', arguments: { project_id: account.project_id } }));
    assert.equal(status.overall, 'down');
    assert.ok(status.monitors.by_status.down >= 1);
    assert.ok(status.attention.some((a: { id: string }) => a.id === down.id));
    assert.ok(
      status.open_incidents.some((i: { monitor_id: string; cause: string }) => i.monitor_id === down.id && i.cause === 'status 502'),
    );
  });

  it('fires a trigger like its notify URL, with its token when protected', async () => {
    const rest = apiClient(cp.url, account.token);
    const hook = await rest('POST', '/integrations', {
      project_id: account.project_id,
      name: 'Hook',
      type: 'webhook',
      config: { url: 'https://hooks.example.test/in' },
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    const open = await rest('POST', '/triggers', {
      project_id: account.project_id,
      name: 'Deploy',
      default_message: 'Deployed',
      integration_ids: [hook.body.data.id],
    });
    assert.equal(open.status, 201, JSON.stringify(open.body));
    const listed = json(await client.callTool({ name: 'list_triggers', arguments: { project_id: account.project_id } }));
    assert.ok(listed.data.some((t: { id: string }) => t.id === open.body.data.id));

    const fired = json(await client.callTool({ name: 'fire_trigger', arguments: { id: open.body.data.id, message: 'v1.2.3 is live' } }));
    assert.equal(fired.outcome, 'dispatched');
    assert.equal(fired.integrations, 1);
    const events = await rest('GET', `/triggers/${open.body.data.id}/events`);
    assert.equal(events.body.data[0].message, 'v1.2.3 is live');
    assert.equal((await rest('GET', `/triggers/${open.body.data.id}`)).body.data.fire_count, 1);

    const guarded = await rest('POST', '/triggers', {
      project_id: account.project_id,
      name: 'Guarded',
      default_message: 'Hi',
      token_protected: true,
    });
    const without = await client.callTool({ name: 'fire_trigger', arguments: { id: guarded.body.data.id } });
    assert.equal(without.isError, true);
    assert.equal(json(without).status, 401);
    const withToken = json(
      await client.callTool({ name: 'fire_trigger', arguments: { id: guarded.body.data.id, token: guarded.body.data.token } }),
    );
    assert.equal(withToken.outcome, 'no_integrations');
  });

  it('previews what an integration would send, with a template given, secrets redacted and nothing sent', async () => {
    const rest = apiClient(cp.url, account.token);
    const hook = await rest('POST', '/integrations', {
      project_id: account.project_id,
      name: 'Chat',
      type: 'slack',
      config: { url: 'https://hooks.slack.example/services/T/B/mcp-preview-secret' },
    });
    const preview = json(
      await client.callTool({
        name: 'preview_integration',
        arguments: { id: hook.body.data.id, template: { body: '{{subject.name}} is {{status}}: {{cause}}' } },
      }),
    );
    assert.equal(preview.notification.event, 'monitor.down');
    const [request] = preview.requests;
    assert.equal(request.url, 'https://hooks.slack.example/[redacted]');
    const body = JSON.parse(request.body);
    assert.equal(body.blocks[1].text.text, 'Sample monitor is down: HTTP 503 (expected 200-299)');
    assert.ok(body.blocks.some((b: { type: string }) => b.type === 'actions'));
    assert.ok(!JSON.stringify(preview).includes('mcp-preview-secret'));
    const bad = await client.callTool({
      name: 'preview_integration',
      arguments: { id: hook.body.data.id, template: { body: '{{nope}}' } },
    });
    assert.equal(bad.isError, true);
    assert.match(JSON.stringify(bad.content), /unknown variable \{\{nope\}\}/);
  });

  it("keeps tenants apart, with the REST API's answers as tool errors", async () => {
    const theirs = await apiClient(cp.url, other.token)('POST', '/monitors', {
      name: 'Theirs',
      url: 'https://theirs.example.com',
      project_id: other.project_id,
    });
    const get = await client.callTool({ name: 'get_monitor', arguments: { id: theirs.body.data.id } });
    assert.equal(get.isError, true);
    assert.deepEqual(json(get), { status: 404, message: 'Not found' });
    const create = await client.callTool({
      name: 'create_monitor',
      arguments: { name: 'Sneaky', url: 'https://x.example.com', project_id: other.project_id },
    });
    assert.equal(create.isError, true);
    assert.equal(json(create).status, 403);
    const status = await client.callTool({ name: 'project_status', arguments: { project_id: other.project_id } });
    assert.equal(status.isError, true);
  });

  it("refuses invalid input with the schema's reasons", async () => {
    const res = await client.callTool({
      name: 'create_monitor',
      arguments: { name: 'x', url: 'ftp://example.com', project_id: account.project_id },
    });
    assert.equal(res.isError, true);
    assert.match((res.content as { text: string }[])[0]!.text, /url/);
    const grace = await client.callTool({
      name: 'create_heartbeat',
      arguments: { name: 'x', project_id: account.project_id, grace_period: 5 },
    });
    assert.equal(grace.isError, true);
  });

  it('answers 401 to a wrong token, an API token, or none, and the SDK client cannot connect', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    for (const authorization of [
      undefined,
      `Bearer ${account.token}`,
      'Bearer uptm_wrongwrongwrongwrongwrongwrongwrongwrongwro',
      `Bearer  ${account.mcpToken}`,
    ]) {
      const res = await fetch(`${cp.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify(init),
      });
      assert.equal(res.status, 401, String(authorization));
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
      assert.deepEqual(await res.json(), { message: 'Unauthorized' });
    }
    await assert.rejects(connect(cp.url, account.token), /401|Unauthorized/);
  });

  it('stops answering a revoked MCP token on the next request', async () => {
    const mine = await createAccount(cp.db.sql);
    const c = await connect(cp.url, mine.mcpToken);
    assert.ok((await c.listTools()).tools.length > 0);
    await cp.db.sql`update api_tokens set revoked_at = now() where user_id = ${mine.user_id} and kind = 'mcp'`;
    await assert.rejects(c.listTools(), /401|Unauthorized/);
    await c.close();
  });

  it('has no session to resume: GET and DELETE are 405', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${cp.url}/mcp`, {
        method,
        headers: { authorization: `Bearer ${account.mcpToken}`, accept: 'text/event-stream' },
      });
      assert.equal(res.status, 405);
      assert.equal(res.headers.get('allow'), 'POST');
    }
  });
});
