import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { open } from '../../shared/src/crypto.ts';
import { apiClient, assertInvalid, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

describe('monitors API: check types, settings and assertions', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  const base = () => ({ name: 'Check', project_id: ada.project_id });
  const storedSettings = async (id: string) => {
    const [row] = await cp.db.sql<{ s: string | null; clear: Record<string, unknown> }[]>`
      select settings_sealed as s, settings as clear from monitors where id = ${id}`;
    return {
      full: row!.s === null ? null : (JSON.parse(open(row!.s, cp.cp.keys.checkCredentials)) as Record<string, unknown>),
      clear: row!.clear,
    };
  };

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
  });
  after(() => cp.stop());

  it('a monitor made with the spec fields only is an http monitor with no settings or assertions, stored as before', async () => {
    const res = await api('POST', '/monitors', { ...base(), url: 'https://example.com/' });
    assert.equal(res.status, 201);
    assert.equal(res.body.data.type, 'http');
    assert.deepEqual(res.body.data.settings, {});
    assert.deepEqual(res.body.data.assertions, []);
    assert.equal((await storedSettings(res.body.data.id)).full, null);
  });

  it('an http monitor with assertions and secret headers: values are sealed, returned as null, kept on update', async () => {
    const res = await api('POST', '/monitors', {
      ...base(),
      url: 'https://api.example.com/health',
      settings: { headers: [{ name: 'X-Api-Key', value: 'k-123-secret' }], body: null },
      assertions: [
        { source: 'json', path: '$.status', operator: 'equals', target: 'ok' },
        { source: 'response_time', operator: 'less_than', target: 500, severity: 'degraded' },
      ],
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const m = res.body.data;
    assert.deepEqual(m.settings.headers, [{ name: 'X-Api-Key', value: null }]);
    assert.equal(JSON.stringify(m).includes('k-123-secret'), false);
    assert.equal(m.assertions.length, 2);
    assert.equal(m.assertions[0].severity, 'down');
    assert.equal(m.assertions[1].severity, 'degraded');
    const stored = await storedSettings(m.id);
    assert.deepEqual(stored.full?.['headers'], [{ name: 'X-Api-Key', value: 'k-123-secret' }]);
    assert.equal(JSON.stringify(stored.clear).includes('k-123-secret'), false);

    // The dashboard sends back what it was shown: the nulls keep the stored secrets.
    const upd = await api('PUT', `/monitors/${m.id}`, {
      settings: {
        headers: [
          { name: 'x-api-key', value: null },
          { name: 'Accept', value: 'application/json' },
        ],
      },
    });
    assert.equal(upd.status, 200, JSON.stringify(upd.body));
    const after = await storedSettings(m.id);
    assert.deepEqual(after.full?.['headers'], [
      { name: 'x-api-key', value: 'k-123-secret' },
      { name: 'Accept', value: 'application/json' },
    ]);
    assert.equal(upd.body.data.assertions.length, 2, 'assertions left out of an update are kept');
  });

  it('each type takes its own URL scheme and settings', async () => {
    const cases: Array<[string, string, Record<string, unknown>]> = [
      ['tcp', 'tcp://db.example.com:5432', { tls: false, send: 'PING\r\n', expect: '+PONG' }],
      ['dns', 'dns://example.com', { record_type: 'MX', resolver: '9.9.9.9' }],
      ['icmp', 'icmp://192.0.2.1', { count: 5 }],
      ['websocket', 'wss://ws.example.com/socket', { send: 'hello', expect: 'hello' }],
      ['grpc', 'grpcs://grpc.example.com:443', { service: 'shop.Cart', metadata: [{ name: 'authorization', value: 'Bearer t0ken' }] }],
    ];
    for (const [type, url, settings] of cases) {
      const res = await api('POST', '/monitors', { ...base(), type, url, settings });
      assert.equal(res.status, 201, `${type}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.data.type, type);
      assert.equal(JSON.stringify(res.body.data).includes('t0ken'), false);
    }
  });

  it('a multi-step check: steps with extraction used by later steps', async () => {
    const res = await api('POST', '/monitors', {
      ...base(),
      type: 'multistep',
      url: 'https://api.example.com/',
      settings: {
        steps: [
          {
            name: 'log in',
            url: 'https://api.example.com/login',
            method: 'POST',
            headers: [{ name: 'content-type', value: 'application/json' }],
            body: '{"user":"probe","password":"s3cret-pw"}',
            extract: [{ name: 'token', source: 'json', path: '$.token' }],
          },
          {
            name: 'orders',
            url: 'https://api.example.com/orders?t={{token}}',
            assertions: [{ source: 'json', path: '$.count', operator: 'exists' }],
          },
        ],
      },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.data.settings.steps[0].body, null);
    assert.equal(JSON.stringify(res.body.data).includes('s3cret-pw'), false);
    const stored = await storedSettings(res.body.data.id);
    assert.equal((stored.full?.['steps'] as Array<{ body: string }>)[0]!.body, '{"user":"probe","password":"s3cret-pw"}');
  });

  it('bad input is a 422 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string[]]> = [
      [{ type: 'tcp', url: 'https://example.com/' }, ['url']],
      [{ type: 'tcp', url: 'tcp://example.com' }, ['url']],
      [{ type: 'http', url: 'tcp://example.com:80' }, ['url']],
      [{ type: 'gopher', url: 'https://example.com/' }, ['type']],
      [{ type: 'dns', url: 'dns://example.com', settings: { record_type: 'ZZ' } }, ['settings.record_type']],
      [{ type: 'dns', url: 'dns://example.com', settings: { resolver: 'not a host!' } }, ['settings.resolver']],
      [{ type: 'icmp', url: 'icmp://example.com', settings: { count: 50 } }, ['settings.count']],
      [{ type: 'tcp', url: 'tcp://example.com:1', settings: { nope: true } }, ['settings']],
      [{ url: 'https://example.com/', settings: { headers: [{ name: 'X-Key', value: null }] } }, ['settings.headers.0.value']],
      [{ url: 'https://example.com/', settings: { headers: [{ name: 'bad name', value: 'x' }] } }, ['settings.headers.0.name']],
      [{ url: 'https://example.com/', assertions: [{ source: 'json', operator: 'exists' }] }, ['assertions.0.path']],
      [{ url: 'https://example.com/', assertions: [{ source: 'body', operator: 'matches', target: '(a' }] }, ['assertions.0.target']],
      [{ url: 'https://example.com/', assertions: [{ source: 'body', operator: 'sort_of', target: 'a' }] }, ['assertions.0.operator']],
      [
        { type: 'dns', url: 'dns://example.com', assertions: [{ source: 'body', operator: 'contains', target: 'a' }] },
        ['assertions.0.source'],
      ],
      [
        { type: 'multistep', url: 'https://a.example/', settings: { steps: [{ name: 's', url: 'https://a.example/{{nope}}' }] } },
        ['settings.steps.0.url'],
      ],
      [{ type: 'multistep', url: 'https://a.example/', settings: { steps: [] } }, ['settings.steps']],
    ];
    for (const [body, fields] of cases) {
      assertInvalid(await api('POST', '/monitors', { ...base(), ...body }), fields);
    }
  });

  it('changing the type starts from the new type\u2019s defaults; an assertion the new type cannot read is refused', async () => {
    const res = await api('POST', '/monitors', {
      ...base(),
      url: 'https://example.com/',
      assertions: [{ source: 'status_code', operator: 'equals', target: 200 }],
    });
    const id = res.body.data.id as string;
    const tcp = await api('PUT', `/monitors/${id}`, { type: 'tcp', url: 'tcp://example.com:443', settings: { tls: true } });
    assert.equal(tcp.status, 200, JSON.stringify(tcp.body));
    assert.deepEqual(tcp.body.data.assertions, []);
    assert.equal(tcp.body.data.settings.tls, true);
    assertInvalid(await api('PUT', `/monitors/${id}`, { assertions: [{ source: 'status_code', operator: 'equals', target: 200 }] }), [
      'assertions.0.source',
    ]);
  });
});
