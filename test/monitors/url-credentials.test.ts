import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { KV } from '@nats-io/kv';
import { AppError } from '../../control-plane/src/platform/errors.ts';
import { startControlPlane } from '../../control-plane/src/runtime/control-plane.ts';
import { moveStoredUrlCredentials } from '../../control-plane/src/monitors/stored-credentials.ts';
import {
  credentialsFromUrl,
  moveIntoBasicAuth,
  splitUrlCredentials,
  type BasicAuthColumns,
} from '../../control-plane/src/monitors/url-credentials.ts';
import { startAgent, type RunningAgent } from '../../probe-agent/src/agent.ts';
import { open } from '../../shared/src/crypto.ts';
import { openBucket } from '../../shared/src/provision.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { registerSecret } from '../harness/secrets.ts';
import { eventually, readStream } from '../harness/streams.ts';
import { csrfOf, webClient, type WebClient } from '../web/client.ts';

describe('splitting credentials off a URL', () => {
  const rows: [string, ReturnType<typeof splitUrlCredentials>][] = [
    ['https://example.com/health', undefined],
    ['https://example.com/a@b', undefined],
    ['http://@example.com/', undefined],
    ['http://ada:s3cret@example.com/health?x=1', { url: 'http://example.com/health?x=1', username: 'ada', password: 's3cret' }],
    ['http://ada@example.com:8080', { url: 'http://example.com:8080/', username: 'ada', password: null }],
    ['http://:s3cret@example.com/', { url: 'http://example.com/', username: '', password: 's3cret' }],
    ['https://ad%40a:p%3Aw%2F%25d@example.com/', { url: 'https://example.com/', username: 'ad@a', password: 'p:w/%d' }],
    ['https://ada:100%zz@example.com/', { url: 'https://example.com/', username: 'ada', password: '100%zz' }],
    ['not a url @ all', undefined],
  ];
  for (const [input, expected] of rows) {
    it(`${input} -> ${expected ? `${expected.url} as ${expected.username}` : 'unchanged'}`, () =>
      assert.deepEqual(splitUrlCredentials(input), expected));
  }
});

describe('credentials in a monitor URL on create and update', () => {
  const invalidUrl = (body: Record<string, unknown>, message: RegExp) =>
    assert.throws(
      () => credentialsFromUrl(body),
      (err: unknown) =>
        err instanceof AppError && err.status === 422 && Object.keys(err.errors ?? {}).join() === 'url' && message.test(err.message),
    );

  it('moves them into basic_auth_username and basic_auth_password', () => {
    assert.deepEqual(credentialsFromUrl({ url: 'https://ada:pw@example.com/', name: 'x' }), {
      url: 'https://example.com/',
      name: 'x',
      basic_auth_username: 'ada',
      basic_auth_password: 'pw',
    });
    assert.deepEqual(credentialsFromUrl({ url: 'https://ada@example.com/', basic_auth_username: null, basic_auth_password: null }), {
      url: 'https://example.com/',
      basic_auth_username: 'ada',
      basic_auth_password: null,
    });
  });

  it('leaves a body without credentials in the URL, or without a URL, as it is', () => {
    const body = { url: 'https://example.com/', basic_auth_username: 'ada', basic_auth_password: 'pw' };
    assert.equal(credentialsFromUrl(body), body);
    const noUrl = { basic_auth_password: 'pw' };
    assert.equal(credentialsFromUrl(noUrl), noUrl);
  });

  it('refuses credentials in the URL and in the basic-auth fields at once', () => {
    invalidUrl({ url: 'https://ada:pw@example.com/', basic_auth_username: 'bob' }, /in one place/);
    invalidUrl({ url: 'https://ada:pw@example.com/', basic_auth_password: 'other' }, /in one place/);
  });

  it('holds the decoded credentials to the bounds of the fields they land in', () => {
    invalidUrl({ url: `https://${'a'.repeat(256)}:pw@example.com/` }, /255 characters/);
    invalidUrl({ url: `https://ada:${'p'.repeat(256)}@example.com/` }, /255 characters/);
    invalidUrl({ url: 'https://a%00da:pw@example.com/' }, /NUL/);
  });
});

describe('credentials a stored URL still holds, for the probe agent', () => {
  const sealed = (p: string) => `sealed(${p})`;
  const rows: [string, BasicAuthColumns, BasicAuthColumns][] = [
    [
      'none in the URL',
      { url: 'https://x.example/', basic_auth_username: 'ada', basic_auth_password_sealed: 's' },
      { url: 'https://x.example/', basic_auth_username: 'ada', basic_auth_password_sealed: 's' },
    ],
    [
      'user and password',
      { url: 'https://ada:p%40w@x.example/', basic_auth_username: null, basic_auth_password_sealed: null },
      { url: 'https://x.example/', basic_auth_username: 'ada', basic_auth_password_sealed: 'sealed(p@w)' },
    ],
    [
      'a user only',
      { url: 'https://ada@x.example/', basic_auth_username: null, basic_auth_password_sealed: 'old' },
      { url: 'https://x.example/', basic_auth_username: 'ada', basic_auth_password_sealed: null },
    ],
    [
      'beside a username, which won',
      { url: 'https://ada:pw@x.example/', basic_auth_username: 'carol', basic_auth_password_sealed: 'c' },
      { url: 'https://x.example/', basic_auth_username: 'carol', basic_auth_password_sealed: 'c' },
    ],
  ];
  for (const [what, stored, expected] of rows) it(what, () => assert.deepEqual(moveIntoBasicAuth(stored, sealed), expected));
});

/** A local site that answers 200 only to the right basic-auth credentials, 401 otherwise; `down` makes it 503. */
async function startGuardedSite(username: string, password: string) {
  const expected = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  const seen: (string | undefined)[] = [];
  const state = { down: false };
  const server = createServer((req, res) => {
    seen.push(req.headers.authorization);
    if (req.headers.authorization !== expected) res.writeHead(401, { 'www-authenticate': 'Basic realm="site"' }).end();
    else res.writeHead(state.down ? 503 : 200).end('ok');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    origin: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('a monitor URL holding credentials, through the product', () => {
  // Written into the URL percent-encoded, as a client must for an @ in a password.
  const password = `Pa55@${randomBytes(8).toString('hex')}`;
  const encoded = encodeURIComponent(password);
  const secondPassword = `Sec0nd-${randomBytes(8).toString('hex')}`;
  let cp: TestControlPlane;
  let agent: RunningAgent;
  let site: Awaited<ReturnType<typeof startGuardedSite>>;
  let ada: TestAccount;
  let api: Call;
  let assignments: KV;
  let monitorId: string;

  const eventsOf = (id: string) =>
    eventually(async () => {
      const events = (await readStream(cp.nats.nc, cp.nats.names.streams.events)).filter((e) => e.data.subject.id === id);
      return events.length > 0 && events;
    }, "the monitor's events");

  /** Nothing a client or a probe could read holds the password, encoded or not. */
  const assertNoPassword = (text: string, where: string) => {
    for (const p of [password, encoded, secondPassword]) assert.ok(!text.includes(p), `${where} holds a password: ${text.slice(0, 300)}`);
  };

  before(async () => {
    for (const p of [password, encoded, secondPassword]) registerSecret(p);
    cp = await startTestControlPlane({ roles: ['api', 'assign', 'ingest'] });
    agent = await startAgent({
      config: cp.config,
      nc: cp.nats.nc,
      log: quietLog,
      region: 'local',
      port: 0,
      pingPort: 0,
      timeScale: 0.2,
      checkKey: cp.cp.keys.checkCredentials,
    });
    site = await startGuardedSite('ada', password);
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    assignments = await openBucket(cp.nats.nc, cp.nats.names, 'assignments', { replicas: 1 });
  });
  after(async () => {
    await agent.stop();
    await site.close();
    await cp.stop();
  });

  it('stores and answers the URL without them, keeps them as basic auth, and the probe signs in with them', async () => {
    const created = await api('POST', '/monitors', {
      name: 'Private',
      url: `http://ada:${encoded}@${site.origin}/private`,
      project_id: ada.project_id,
      interval: 5,
      timeout: 2,
      valid_http_codes: [200],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    monitorId = created.body.data.id;
    assert.equal(created.body.data.url, `http://${site.origin}/private`);
    assert.equal(created.body.data.basic_auth_username, 'ada');
    assert.equal('basic_auth_password' in created.body.data, false);

    await eventually(async () => (await api('GET', `/monitors/${monitorId}`)).body.data.status === 1, 'the monitor up', 20_000);
    assert.ok(
      site.seen.length > 0 && site.seen.every((a) => a === `Basic ${Buffer.from(`ada:${password}`).toString('base64')}`),
      'every check sent the credentials',
    );

    for (const path of ['/monitors', `/monitors/${monitorId}`, `/monitors/${monitorId}/results`]) {
      assertNoPassword(JSON.stringify((await api('GET', path)).body), `GET ${path}`);
    }
    assertNoPassword(JSON.stringify(created.body), 'the create answer');
  });

  it('keeps the password out of the database row in clear and out of the assignment in KV', async () => {
    const [row] = await cp.db.sql<{ url: string; basic_auth_password_sealed: string }[]>`select * from monitors where id = ${monitorId}`;
    assert.equal(row!.url, `http://${site.origin}/private`);
    assertNoPassword(JSON.stringify(row), 'the monitors row');
    assert.equal(open(row!.basic_auth_password_sealed, cp.cp.keys.checkCredentials), password);

    const entry = await assignments.get(`local.${monitorId}`);
    const value = entry!.string();
    assertNoPassword(value, 'the assignment');
    assert.equal(JSON.parse(value).url, `http://${site.origin}/private`);
  });

  it('keeps the password out of the events of the monitor', async () => {
    site.state.down = true;
    await eventually(async () => (await api('GET', `/monitors/${monitorId}`)).body.data.status === 2, 'the monitor down', 20_000);
    site.state.down = false;
    // Published after the transition's commit: waited for, not assumed.
    const events = await eventsOf(monitorId);
    assert.deepEqual(
      events.map((e) => e.data.kind),
      ['monitor.down'],
    );
    assert.equal(events[0]!.data.data.url, `http://${site.origin}/private`);
    assertNoPassword(JSON.stringify(events), 'the events');
  });

  it('replaces the stored credentials with those of a URL sent on update, and refuses both at once', async () => {
    const updated = await api('PUT', `/monitors/${monitorId}`, { url: `http://bob:${secondPassword}@${site.origin}/private` });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    assert.equal(updated.body.data.url, `http://${site.origin}/private`);
    assert.equal(updated.body.data.basic_auth_username, 'bob');
    assertNoPassword(JSON.stringify(updated.body), 'the update answer');
    const [row] = await cp.db.sql<
      { basic_auth_password_sealed: string }[]
    >`select basic_auth_password_sealed from monitors where id = ${monitorId}`;
    assert.equal(open(row!.basic_auth_password_sealed, cp.cp.keys.checkCredentials), secondPassword);

    const conflict = await api('PUT', `/monitors/${monitorId}`, {
      url: `http://ada:${encoded}@${site.origin}/private`,
      basic_auth_username: 'ada',
    });
    assert.equal(conflict.status, 422);
    assert.deepEqual(Object.keys(conflict.body.errors), ['url']);
    assertNoPassword(JSON.stringify(conflict.body), 'the refusal');
    // Back to ada for the checks that follow.
    assert.equal((await api('PUT', `/monitors/${monitorId}`, { url: `http://ada:${encoded}@${site.origin}/private` })).status, 200);
  });

  it('does the same through the MCP monitor tools', async () => {
    const mcp = new Client({ name: 'uptime-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${cp.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${ada.mcpToken}` } },
      }),
    );
    try {
      const text = (r: Awaited<ReturnType<Client['callTool']>>) => (r.content as { text: string }[])[0]!.text;
      const created = await mcp.callTool({
        name: 'create_monitor',
        arguments: { name: 'Via MCP', url: `http://ada:${encoded}@${site.origin}/mcp`, project_id: ada.project_id, active: false },
      });
      assert.equal(created.isError, undefined, text(created));
      assertNoPassword(text(created), 'create_monitor');
      const m = JSON.parse(text(created));
      assert.equal(m.url, `http://${site.origin}/mcp`);
      assert.equal(m.basic_auth_username, 'ada');
      const updated = await mcp.callTool({
        name: 'update_monitor',
        arguments: { id: m.id, changes: { url: `http://bob:${secondPassword}@${site.origin}/mcp` } },
      });
      assertNoPassword(text(updated), 'update_monitor');
      assert.equal(JSON.parse(text(updated)).basic_auth_username, 'bob');
      for (const [name, args] of [
        ['get_monitor', { id: m.id }],
        ['list_monitors', {}],
      ] as const) {
        assertNoPassword(text(await mcp.callTool({ name, arguments: args })), name);
      }
    } finally {
      await mcp.close();
    }
  });

  it('does the same through the dashboard form, without echoing the password when the form is shown again', async () => {
    const web: WebClient = webClient(cp.url);
    assert.equal((await web.signIn(ada.email, ada.password)).status, 303);
    const form = await web.get('/app/monitors/new');
    const fields = {
      _csrf: csrfOf(form.text),
      name: 'Via form',
      url: `http://ada:${encoded}@${site.origin}/form`,
      _method: 'GET',
      interval: '60',
    };
    const refused = await web.post('/app/monitors', { ...fields, valid_http_codes: 'not codes' });
    assert.equal(refused.status, 422);
    assertNoPassword(refused.text, 'the form shown again');
    assert.match(refused.text, new RegExp(`value="http://${site.origin}/form"`));
    assert.match(refused.text, /name="basic_auth_username"[^>]*value="ada"|value="ada"[^>]*name="basic_auth_username"/);

    const created = await web.post('/app/monitors', { ...fields, valid_http_codes: '200' });
    assert.equal(created.status, 303, created.text.slice(0, 300));
    const page = created.location!;
    const id = page.split('/').pop()!;
    const [row] = await cp.db.sql<
      { url: string; basic_auth_username: string; basic_auth_password_sealed: string }[]
    >`select * from monitors where id = ${id}`;
    assert.equal(row!.url, `http://${site.origin}/form`);
    assert.equal(row!.basic_auth_username, 'ada');
    assert.equal(open(row!.basic_auth_password_sealed, cp.cp.keys.checkCredentials), password);
    for (const path of [page, `${page}/edit`, '/app/monitors']) assertNoPassword((await web.get(path)).text, path);
  });

  // A row written before credentials were split off on write (or by an older process during an upgrade).
  const insertStored = async (name: string, url: string, opts: { username?: string; active?: boolean } = {}) =>
    (
      await cp.db.sql<{ id: string }[]>`
      insert into monitors (project_id, name, url, method, valid_http_codes, basic_auth_username, active, interval_seconds, timeout_seconds)
      values (${ada.project_id}, ${name}, ${url}, 'GET', '{200}', ${opts.username ?? null}, ${opts.active ?? true}, 5, 2) returning id`
    )[0]!.id;
  let storedId: string;

  it('never shows credentials a stored URL still holds: not in responses, the assignment or events, and the probe still signs in', async () => {
    storedId = await insertStored('Stored', `http://ada:${encoded}@${site.origin}/stored`);
    const read = await api('GET', `/monitors/${storedId}`);
    assert.equal(read.body.data.url, `http://${site.origin}/stored`);
    assertNoPassword(JSON.stringify(read.body), 'a stored URL with credentials');

    const entry = await eventually(async () => (await assignments.get(`local.${storedId}`))?.string(), 'the assignment');
    assertNoPassword(entry, 'the assignment of a stored URL with credentials');
    const assignment = JSON.parse(entry);
    assert.equal(assignment.url, `http://${site.origin}/stored`);
    assert.equal(assignment.basic_auth_username, 'ada');
    assert.equal(open(assignment.basic_auth_password_sealed, cp.cp.keys.checkCredentials), password);
    await eventually(async () => (await api('GET', `/monitors/${storedId}`)).body.data.status === 1, 'the monitor up', 20_000);

    site.state.down = true;
    await eventually(async () => (await api('GET', `/monitors/${storedId}`)).body.data.status === 2, 'the monitor down', 20_000);
    site.state.down = false;
    const events = await eventsOf(storedId);
    assert.equal(events[0]!.data.data.url, `http://${site.origin}/stored`);
    assertNoPassword(JSON.stringify(events), 'the events of a stored URL with credentials');
  });

  it('moves stored credentials into the sealed basic-auth columns when a process with the assign role starts', async () => {
    // Where the monitor also had a username, that one was what the probe sent: it stays.
    const withUsername = await insertStored('Stored, with a username', `http://ada:${encoded}@${site.origin}/explicit`, {
      username: 'carol',
      active: false,
    });
    const second = await startControlPlane({
      config: cp.config,
      log: quietLog,
      sql: cp.db.sql,
      nc: cp.nats.nc,
      roles: ['assign'],
      port: 0,
    });
    await second.stop();
    const rows = await cp.db.sql<{ id: string; url: string; basic_auth_username: string; basic_auth_password_sealed: string | null }[]>`
      select id, url, basic_auth_username, basic_auth_password_sealed from monitors where id in (${storedId}, ${withUsername})`;
    const byId = new Map(rows.map((r) => [r.id, r]));
    assert.equal(byId.get(storedId)!.url, `http://${site.origin}/stored`);
    assert.equal(byId.get(storedId)!.basic_auth_username, 'ada');
    assert.equal(open(byId.get(storedId)!.basic_auth_password_sealed!, cp.cp.keys.checkCredentials), password);
    assert.deepEqual(byId.get(withUsername), {
      id: withUsername,
      url: `http://${site.origin}/explicit`,
      basic_auth_username: 'carol',
      basic_auth_password_sealed: null,
    });
    assertNoPassword(JSON.stringify(await cp.db.sql`select * from monitors`), 'the monitors table');
    assert.equal(await moveStoredUrlCredentials(cp.db.sql, cp.cp.keys.checkCredentials, quietLog), 0, 'nothing left to move');
  });
});
