import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { open } from '../../shared/src/crypto.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { registerSecret } from '../harness/secrets.ts';
import { webClient, type WebClient, type WebResponse } from './client.ts';
import { formFields } from './form-fields.ts';

/** The messages shown under a field of the form (by its name). */
function errorsUnder(res: WebResponse, name: string): string[] {
  const at = res.text.indexOf(`id="f-${name}"`);
  assert.ok(at >= 0, `the page has a ${name} field`);
  const start = res.text.lastIndexOf('<div class="field', at);
  const next = res.text.indexOf('<div class="field', at);
  const block = res.text.slice(start, next < 0 ? undefined : next);
  return [...block.matchAll(/<div class="error">([^<]*)<\/div>/g)].map((m) => m[1]!);
}

/**
 * The monitor form for every check type, posted as a browser without JavaScript posts it: every
 * type's fields are on the page, and the server reads those of the type chosen. What the API then
 * returns is what the form said; secrets are kept by leaving their fields empty; the API's field
 * errors show under the row they came from.
 */
describe('the monitor form for each check type', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let web: WebClient;
  let api: Call;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql, { email: 'ada-types@example.test' });
    web = webClient(cp.url);
    await web.signIn(ada.email, ada.password);
    api = apiClient(cp.url, ada.token);
  });
  after(() => cp.stop());

  /** The form as the page serves it, with `changes` typed in. */
  async function filled(page: string, changes: Record<string, string>): Promise<Record<string, string>> {
    return { ...formFields((await web.get(page)).text, 'data-check-form'), ...changes };
  }

  async function create(changes: Record<string, string>) {
    const res = await web.post('/app/monitors', await filled('/app/monitors/new', { interval: '60', ...changes }));
    assert.equal(res.status, 303, errorsOf(res));
    const id = res.location!.split('/').at(-1)!;
    return (await api('GET', `/monitors/${id}`)).body.data;
  }

  const errorsOf = (res: WebResponse) => [...res.text.matchAll(/<div class="error">([^<]*)<\/div>/g)].map((m) => m[1]).join(' | ');

  async function storedSettings(id: string): Promise<Record<string, unknown>> {
    const [row] = await cp.db.sql<{ sealed: string }[]>`select settings_sealed as sealed from monitors where id = ${id}`;
    return JSON.parse(open(row!.sealed, cp.cp.keys.checkCredentials));
  }

  it('renders every type on the new-monitor form, the URL labelled for the type', async () => {
    const page = (await web.get('/app/monitors/new')).text;
    for (const type of ['tcp', 'dns', 'icmp', 'websocket', 'grpc', 'multistep']) assert.match(page, new RegExp(`data-types="${type}"`));
    assert.match(page, /<option value="http"\s+selected>HTTP\(S\)<\/option>/);
    assert.match(page, /data-label-tcp="Address"/);
    assert.match(page, /name="alert_degraded"/);
    assert.match(page, /<select id="f-test_region" name="test_region">\s*<option value=""\s+selected>Any region<\/option>/);
  });

  it('creates a TCP, a DNS, a ping, a WebSocket and a gRPC monitor with their settings and assertions', async () => {
    const tcp = await create({
      name: 'Redis',
      type: 'tcp',
      url: 'tcp://cache.example.test:6379',
      'tcp.tls': 'on',
      'tcp.send': 'PING\r\n',
      'tcp.expect': '+PONG',
      'assertion.0.source': 'response_time',
      'assertion.0.operator': 'less_than',
      'assertion.0.target': '250',
      'assertion.0.severity': 'degraded',
      alert_degraded: 'on',
    });
    assert.equal(tcp.type, 'tcp');
    assert.deepEqual(tcp.settings, { tls: true, send: 'PING\r\n', expect: '+PONG' });
    assert.deepEqual(tcp.assertions, [{ source: 'response_time', operator: 'less_than', target: 250, severity: 'degraded' }]);
    assert.equal(tcp.alert_degraded, true);

    const dns = await create({
      name: 'MX',
      type: 'dns',
      url: 'dns://example.test',
      'dns.record_type': 'MX',
      'dns.resolver': '9.9.9.9',
      'dns.resolver_port': '5353',
      'assertion.0.source': 'dns_answer',
      'assertion.0.operator': 'in',
      'assertion.0.target': '10 mx1.example.test, 20 mx2.example.test',
    });
    assert.deepEqual([dns.type, dns.settings], ['dns', { record_type: 'MX', resolver: '9.9.9.9', resolver_port: 5353 }]);
    assert.deepEqual(dns.assertions[0].target, ['10 mx1.example.test', '20 mx2.example.test']);
    assert.equal(dns.alert_degraded, false);

    const icmp = await create({
      name: 'Gateway',
      type: 'icmp',
      url: 'icmp://gateway.example.test',
      'icmp.count': '5',
      'assertion.0.source': 'packet_loss',
      'assertion.0.operator': 'less_or_equal',
      'assertion.0.target': '20',
    });
    assert.deepEqual([icmp.type, icmp.settings, icmp.assertions[0].target], ['icmp', { count: 5 }, 20]);

    registerSecret('ws-secret-token-1');
    const ws = await create({
      name: 'Live feed',
      type: 'websocket',
      url: 'wss://feed.example.test/socket',
      'websocket.headers.0.name': 'Authorization',
      'websocket.headers.0.value': 'ws-secret-token-1',
      'websocket.send': 'subscribe',
      'websocket.expect': 'ok',
    });
    assert.equal(ws.type, 'websocket');
    assert.deepEqual(ws.settings, { headers: [{ name: 'Authorization', value: null }], send: 'subscribe', expect: 'ok' });
    assert.deepEqual((await storedSettings(ws.id))['headers'], [{ name: 'Authorization', value: 'ws-secret-token-1' }]);

    const grpc = await create({
      name: 'Orders gRPC',
      type: 'grpc',
      url: 'grpcs://orders.example.test:443',
      _method: 'POST',
      'grpc.service': 'orders.v1.Orders',
      'grpc.metadata.0.name': 'x-tenant',
      'grpc.metadata.0.value': 'acme',
      'assertion.0.source': 'grpc_status',
      'assertion.0.operator': 'equals',
      'assertion.0.target': 'SERVING',
    });
    assert.deepEqual(grpc.settings, { service: 'orders.v1.Orders', metadata: [{ name: 'x-tenant', value: null }] });
    assert.deepEqual(grpc.assertions, [{ source: 'grpc_status', operator: 'equals', target: 'SERVING', severity: 'down' }]);
    // The HTTP fields of the form (method, codes) were not sent for another type: the defaults stand.
    assert.equal(grpc.method, 'GET');
  });

  it('creates a multi-step monitor from step blocks, with headers, extractions and assertions as lines', async () => {
    registerSecret('step-body-secret');
    const m = await create({
      name: 'Checkout flow',
      type: 'multistep',
      url: 'https://shop.example.test',
      'multistep.steps.0.name': 'log in',
      'multistep.steps.0.method': 'POST',
      'multistep.steps.0.url': 'https://shop.example.test/login',
      'multistep.steps.0.headers': 'Content-Type: application/json\r\nX-Client: probe',
      'multistep.steps.0.body': '{"user":"step-body-secret"}',
      'multistep.steps.0.valid_http_codes': '200-201',
      'multistep.steps.0.extract': 'token = json $.token\r\nid = header x-id\r\nn = body /id=(\\d+)/',
      // Step 2 left empty: ignored.
      'multistep.steps.2.name': 'orders',
      'multistep.steps.2.url': 'https://shop.example.test/orders?token={{token}}',
      'multistep.steps.2.assertions': 'json $.count greater_than 0\r\ndegraded: response_time less_than 800',
      'multistep.steps.2.timeout': '5',
    });
    assert.equal(m.type, 'multistep');
    assert.deepEqual(m.settings.steps, [
      {
        name: 'log in',
        url: 'https://shop.example.test/login',
        method: 'POST',
        headers: [
          { name: 'Content-Type', value: null },
          { name: 'X-Client', value: null },
        ],
        body: null,
        valid_http_codes: [200, 201],
        assertions: [],
        extract: [
          { name: 'token', source: 'json', path: '$.token' },
          { name: 'id', source: 'header', path: 'x-id' },
          { name: 'n', source: 'body', path: 'id=(\\d+)' },
        ],
      },
      {
        name: 'orders',
        url: 'https://shop.example.test/orders?token={{token}}',
        method: 'GET',
        headers: [],
        body: null,
        assertions: [
          { source: 'json', path: '$.count', operator: 'greater_than', target: 0, severity: 'down' },
          { source: 'response_time', operator: 'less_than', target: 800, severity: 'degraded' },
        ],
        extract: [],
        timeout: 5,
      },
    ]);
    const stored = (await storedSettings(m.id))['steps'] as { body: string | null }[];
    assert.equal(stored[0]!.body, '{"user":"step-body-secret"}');

    // The edit form shows the steps as they were entered (a stored header by its name alone, no body)
    // and saving it unchanged keeps everything, the secrets included.
    const edit = `/app/monitors/${m.id}/edit`;
    const form = await filled(edit, {});
    assert.equal(form['multistep.steps.0.headers'], 'Content-Type\nX-Client');
    assert.equal(form['multistep.steps.0.extract'], 'token = json $.token\nid = header x-id\nn = body /id=(\\d+)/');
    assert.equal(form['multistep.steps.1.assertions'], 'json $.count greater_than 0\ndegraded: response_time less_than 800');
    assert.equal(form['multistep.steps.0.body'], '');
    assert.doesNotMatch((await web.get(edit)).text, /step-body-secret/);
    const saved = await web.post(edit, form);
    assert.equal(saved.status, 303, errorsOf(saved));
    assert.deepEqual((await api('GET', `/monitors/${m.id}`)).body.data.settings, m.settings);
    const again = (await storedSettings(m.id))['steps'] as { body: string | null; headers: unknown }[];
    assert.equal(again[0]!.body, '{"user":"step-body-secret"}');
  });

  it('creates an HTTP monitor with request headers, a body and assertions, and keeps a secret header on edit when its field is left empty', async () => {
    registerSecret('k-web-secret-1');
    registerSecret('k-web-secret-2');
    const m = await create({
      name: 'Orders API',
      url: 'https://api.example.test/orders',
      _method: 'POST',
      valid_http_codes: '200-299',
      'http.headers.0.name': 'X-Api-Key',
      'http.headers.0.value': 'k-web-secret-1',
      'http.headers.1.name': 'Accept',
      'http.headers.1.value': 'application/json',
      'http.body': '{"probe":true}',
      'assertion.0.source': 'json',
      'assertion.0.path': '$.status',
      'assertion.0.operator': 'equals',
      'assertion.0.target': 'ok',
      'assertion.2.source': 'status_code',
      'assertion.2.operator': 'in',
      'assertion.2.target': '200, 201',
      'assertion.3.source': 'header',
      'assertion.3.path': 'content-type',
      'assertion.3.operator': 'exists',
    });
    assert.equal(m.type, 'http');
    assert.equal(m.method, 'POST');
    assert.deepEqual(m.settings, {
      headers: [
        { name: 'X-Api-Key', value: null },
        { name: 'Accept', value: null },
      ],
      body: null,
    });
    assert.deepEqual(m.assertions, [
      { source: 'json', path: '$.status', operator: 'equals', target: 'ok', severity: 'down' },
      { source: 'status_code', operator: 'in', target: [200, 201], severity: 'down' },
      { source: 'header', path: 'content-type', operator: 'exists', severity: 'down' },
    ]);

    const edit = `/app/monitors/${m.id}/edit`;
    const page = (await web.get(edit)).text;
    assert.doesNotMatch(page, /k-web-secret-1|probe&quot;:true/, 'no secret is shown');
    assert.match(page, /<input\s+id="f-http\.headers\.0\.value"\s+name="http\.headers\.0\.value"\s+type="password"\s+value=""/);
    assert.match(page, /kept unless you type a new value/);
    const form = await filled(edit, { name: 'Orders API v2' });
    assert.equal(form['assertion.1.target'], '200, 201');
    const saved = await web.post(edit, form);
    assert.equal(saved.status, 303, errorsOf(saved));
    assert.deepEqual(await storedSettings(m.id), {
      headers: [
        { name: 'X-Api-Key', value: 'k-web-secret-1' },
        { name: 'Accept', value: 'application/json' },
      ],
      body: '{"probe":true}',
    });
    assert.equal((await api('GET', `/monitors/${m.id}`)).body.data.name, 'Orders API v2');

    // A new value replaces the stored one; removing the body and a header's row drops them.
    const changed = await web.post(
      edit,
      await filled(edit, {
        'http.headers.0.value': 'k-web-secret-2',
        'http.headers.1.name': '',
        'http.body_clear': 'on',
      }),
    );
    assert.equal(changed.status, 303, errorsOf(changed));
    assert.deepEqual(await storedSettings(m.id), { headers: [{ name: 'X-Api-Key', value: 'k-web-secret-2' }], body: '' });
  });

  it('changes the type on edit: the new type starts from its own settings', async () => {
    const m = await create({ name: 'Becomes a ping', url: 'https://host.example.test/' });
    const edit = `/app/monitors/${m.id}/edit`;
    const saved = await web.post(edit, await filled(edit, { type: 'icmp', url: 'icmp://host.example.test', 'icmp.count': '2' }));
    assert.equal(saved.status, 303, errorsOf(saved));
    const after = (await api('GET', `/monitors/${m.id}`)).body.data;
    assert.deepEqual([after.type, after.settings], ['icmp', { count: 2 }]);
    assert.match((await web.get(edit)).text, /<option value="icmp"\s+selected>/);
  });

  it('sets the expiry warnings from the form: defaults kept, days changed, emptied to none, a bad entry named', async () => {
    const m = await create({ name: 'Shop', url: 'https://shop.example.test/' });
    assert.deepEqual(
      [m.certificate_expiry_days, m.domain_expiry_days],
      [
        [30, 14, 7, 1],
        [30, 14, 7, 1],
      ],
    );
    const edit = `/app/monitors/${m.id}/edit`;
    const saved = await web.post(edit, await filled(edit, { certificate_expiry_days: '21 7, 2', domain_expiry_days: '' }));
    assert.equal(saved.status, 303, errorsOf(saved));
    const after = (await api('GET', `/monitors/${m.id}`)).body.data;
    assert.deepEqual([after.certificate_expiry_days, after.domain_expiry_days], [[21, 7, 2], []]);
    assert.match((await web.get(edit)).text, /name="certificate_expiry_days"[^>]*value="21, 7, 2"/);

    const bad = await web.post(edit, await filled(edit, { certificate_expiry_days: '30, two weeks' }));
    assert.equal(bad.status, 422);
    assert.deepEqual(errorsUnder(bad, 'certificate_expiry_days'), [
      'Use whole numbers of days, such as 30, 14, 7, 1; empty for no warnings.',
    ]);
    const tooFar = await web.post(edit, await filled(edit, { domain_expiry_days: '400' }));
    assert.equal(tooFar.status, 422);
    assert.equal(errorsUnder(tooFar, 'domain_expiry_days').length, 1);
  });

  it('shows each validation error under the field it is about, on the row it came from', async () => {
    // Assertion rows 0 and 3 filled: the API's assertions.1 is the form's row 3.
    const assertion = await web.post(
      '/app/monitors',
      await filled('/app/monitors/new', {
        name: 'Bad assertion',
        url: 'https://api.example.test/',
        'assertion.0.source': 'status_code',
        'assertion.0.operator': 'equals',
        'assertion.0.target': '200',
        'assertion.3.source': 'json',
        'assertion.3.path': 'status',
        'assertion.3.operator': 'equals',
        'assertion.3.target': 'ok',
      }),
    );
    assert.equal(assertion.status, 422);
    assert.deepEqual(errorsUnder(assertion, 'assertion.3.path'), ['A JSONPath starts with $ (for example $.status or $.items[0].id).']);
    assert.deepEqual(errorsUnder(assertion, 'assertion.1.path'), []);
    assert.match(assertion.text, /name="assertion\.3\.path"[^>]*value="status"/, 'what was typed is kept');

    // Step blocks 0 and 2 filled: the API's settings.steps.1 is the form's step 2.
    const step = await web.post(
      '/app/monitors',
      await filled('/app/monitors/new', {
        name: 'Bad step',
        type: 'multistep',
        url: 'https://shop.example.test',
        'multistep.steps.0.name': 'home',
        'multistep.steps.0.url': 'https://shop.example.test/',
        'multistep.steps.2.name': 'files',
        'multistep.steps.2.url': 'ftp://files.example.test/',
      }),
    );
    assert.equal(step.status, 422);
    assert.deepEqual(errorsUnder(step, 'multistep.steps.2.url'), ['A step url must be http or https.']);

    // A header row whose name is not a header name, and lines the form cannot read.
    const lines = await web.post(
      '/app/monitors',
      await filled('/app/monitors/new', {
        name: 'Bad lines',
        type: 'multistep',
        url: 'https://shop.example.test',
        'multistep.steps.0.name': 'home',
        'multistep.steps.0.url': 'https://shop.example.test/',
        'multistep.steps.0.extract': 'token = json $.token\r\n\r\ntoken from the body',
        'multistep.steps.0.valid_http_codes': '200, 7',
      }),
    );
    assert.equal(lines.status, 422);
    assert.deepEqual(errorsUnder(lines, 'multistep.steps.0.extract'), [
      'Line 3: write name = json $.path, name = header Header-Name or name = body /pattern/.',
    ]);
    assert.deepEqual(errorsUnder(lines, 'multistep.steps.0.valid_http_codes'), ['Use codes and ranges such as 200-299, 301.']);

    const header = await web.post(
      '/app/monitors',
      await filled('/app/monitors/new', {
        name: 'Bad header',
        url: 'https://api.example.test/',
        'http.headers.1.name': 'Bad Header',
        'http.headers.1.value': 'x',
        'assertion.0.source': 'status_code',
        'assertion.0.operator': 'less_than',
        'assertion.0.target': 'fast',
      }),
    );
    assert.equal(header.status, 422);
    assert.deepEqual(errorsUnder(header, 'assertion.0.target'), ['A number, such as 200 or 1.5.']);
    const server = await web.post('/app/monitors', await filled('/app/monitors/new', { ...fieldsOf(header), 'assertion.0.target': '300' }));
    assert.equal(server.status, 422);
    assert.match(errorsUnder(server, 'http.headers.1.name')[0]!, /^A header name is 1 to 100 letters/);

    const [row] = await cp.db.sql<{ n: number }[]>`select count(*)::int as n from monitors where name like 'Bad %'`;
    assert.equal(row!.n, 0);
  });

  /** The fields of a form shown again (what the person would post next). */
  const fieldsOf = (res: WebResponse) => formFields(res.text, 'data-check-form');

  it("shows the type and the latest result's assertions and details on the monitor's page", async () => {
    const m = (
      await api('POST', '/monitors', {
        project_id: ada.project_id,
        name: 'Shop TLS',
        url: 'https://shop.example.test/',
        assertions: [{ source: 'certificate_days', operator: 'greater_than', target: 14 }],
      })
    ).body.data;
    const tcp = (
      await api('POST', '/monitors', { project_id: ada.project_id, name: 'Plain TCP', type: 'tcp', url: 'tcp://db.example.test:5432' })
    ).body.data;
    const at = new Date(Date.now() - 60_000).toISOString();
    await cp.db.sql`
      insert into check_results ${cp.db.sql({
        monitor_id: m.id,
        scheduled_at: at,
        region: 'eu-west',
        checked_at: at,
        agent_id: 'eu-west-1',
        ok: false,
        status_code: 200,
        dns_ms: 1,
        connect_ms: 2,
        tls_ms: 3,
        ttfb_ms: 40,
        total_ms: 52,
        error_class: 'assertion',
        error_message: 'Expected certificate_days greater_than 14, got 9',
        attempts: 2,
        degraded: false,
        extra: cp.db.sql.json({
          assertions: [
            {
              source: 'certificate_days',
              operator: 'greater_than',
              target: 14,
              severity: 'down',
              passed: false,
              observed: 9,
              message: 'Expected certificate_days greater_than 14, got 9',
            },
          ],
          details: {
            certificate: {
              subject: 'CN=shop.example.test',
              issuer: 'CN=Example CA',
              sans: ['shop.example.test', 'www.shop.example.test'],
              valid_from: '2026-01-01T00:00:00.000Z',
              valid_to: '2026-02-01T00:00:00.000Z',
              days_left: 9.4,
              fingerprint256: 'AA:BB',
            },
          },
        }),
      })}`;
    const page = (await web.get(`/app/monitors/${m.id}`)).text;
    assert.match(page, /data-testid="monitor-type">HTTP GET</);
    const card = page.slice(page.indexOf('data-testid="last-check"'));
    assert.match(card, /data-testid="assertion" data-passed="false"/);
    assert.match(card, /Expected certificate_days greater_than 14, got 9/);
    // The certificate is the page's own Certificate card's (kept from results as they are stored), not repeated here.
    assert.doesNotMatch(card, /CN=Example CA|data-testid="check-certificate"/);
    const plain = (await web.get(`/app/monitors/${tcp.id}`)).text;
    assert.match(plain, /data-testid="monitor-type">TCP port</);
    assert.doesNotMatch(plain, /data-testid="last-check"/, 'no card without assertions or details');
    // The Settings card shows what the type has: no HTTP method, codes or redirects for a TCP port.
    const settings = plain.slice(plain.indexOf('<h2>Settings</h2>'));
    assert.doesNotMatch(settings, /<dt>Method<\/dt>|<dt>Accepted codes<\/dt>|<dt>Redirects<\/dt>/);
    assert.match(page.slice(page.indexOf('<h2>Settings</h2>')), /<dt>Accepted codes<\/dt>/);
  });

  it('marks a passing check whose degraded assertion failed in the recent checks, with the assertion', async () => {
    const m = (
      await api('POST', '/monitors', {
        project_id: ada.project_id,
        name: 'Slow API',
        url: 'https://slow.example.test/',
        assertions: [{ source: 'response_time', operator: 'less_than', target: 300, severity: 'degraded' }],
      })
    ).body.data;
    const at = new Date(Date.now() - 60_000).toISOString();
    await cp.db.sql`
      insert into check_results ${cp.db.sql({
        monitor_id: m.id,
        scheduled_at: at,
        region: 'eu-west',
        checked_at: at,
        agent_id: 'eu-west-1',
        ok: true,
        status_code: 200,
        dns_ms: 1,
        connect_ms: 2,
        tls_ms: 3,
        ttfb_ms: 700,
        total_ms: 712,
        attempts: 1,
        degraded: true,
        extra: cp.db.sql.json({
          assertions: [
            {
              source: 'response_time',
              operator: 'less_than',
              target: 300,
              severity: 'degraded',
              passed: false,
              observed: 712,
              message: 'Expected response_time less_than 300, got 712',
            },
          ],
        }),
      })}`;
    const page = (await web.get(`/app/monitors/${m.id}`)).text;
    const recent = page.slice(page.indexOf('<h2>Recent checks</h2>'));
    assert.match(recent, /data-testid="degraded-check"[^>]*>Degraded · 200</);
    assert.match(recent, /Expected response_time less_than 300, got 712/);
  });
});
