import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { open } from '../../shared/src/crypto.ts';
import { apiClient, assertInvalid, timestampFormat, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startWebhookSink, type Target } from '../harness/http.ts';

const uuid = /^[0-9a-f-]{36}$/;
const botToken = '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw';
const routingKey = 'R0123456789abcdefghijklmnopqrstu';

/** One valid create per type, with the secrets each one must never give back. */
const examples: Record<string, { config: Record<string, unknown>; secrets: string[]; shown: Record<string, unknown> }> = {
  webhook: {
    config: {
      url: 'https://hooks.example.com/in/abc123xyz',
      secret: 'a-very-long-signing-secret',
      headers: { Authorization: 'Bearer hdr-secret-1' },
    },
    secrets: ['abc123xyz', 'a-very-long-signing-secret', 'hdr-secret-1'],
    shown: { url_set: true, url_hint: 'https://hooks.example.com/…3xyz', secret_set: true, headers_set: true },
  },
  slack: {
    config: { url: 'https://hooks.slack.com/services/T000/B000/XXXXslacktoken' },
    secrets: ['XXXXslacktoken'],
    shown: { url_set: true, url_hint: 'https://hooks.slack.com/…oken' },
  },
  discord: {
    config: { url: 'https://discord.com/api/webhooks/1/discordtoken' },
    secrets: ['discordtoken'],
    shown: { url_set: true },
  },
  teams: { config: { url: 'https://example.webhook.office.com/webhookb2/teamstoken' }, secrets: ['teamstoken'], shown: { url_set: true } },
  telegram: {
    config: { bot_token: botToken, chat_id: -1001234567890 },
    secrets: [botToken, 'AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw'],
    shown: { chat_id: '-1001234567890', api_base_url: 'https://api.telegram.org', bot_token_set: true },
  },
  email: {
    config: { recipients: ['ops@example.com'], smtp_url: 'smtp://mailer:smtp-pass-9@mail.example.com:587' },
    secrets: ['smtp-pass-9', 'mailer:'],
    shown: { recipients: ['ops@example.com'], smtp_url_set: true, smtp_url_hint: 'smtp://mail.example.com:587/' },
  },
  pagerduty: {
    config: { routing_key: routingKey },
    secrets: [routingKey],
    shown: { events_url: 'https://events.pagerduty.com/v2/enqueue', severity: 'critical', routing_key_set: true },
  },
  ntfy: {
    config: { topic: 'ops-alerts', token: 'tk_ntfysecrettoken' },
    secrets: ['tk_ntfysecrettoken'],
    shown: { server: 'https://ntfy.sh', topic: 'ops-alerts', token_set: true },
  },
};

describe('integrations API', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let sink: Target;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    sink = await startWebhookSink();
  });
  after(async () => {
    await sink.close();
    await cp.stop();
  });

  for (const [type, example] of Object.entries(examples)) {
    it(`creates ${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type} integration, keeps its secrets sealed and never returns them`, async () => {
      const res = await api('POST', '/integrations', { project_id: ada.project_id, name: `My ${type}`, type, config: example.config });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.equal(res.body.message, 'Integration created successfully');
      const i = res.body.data;
      assert.match(i.id, uuid);
      assert.equal(i.type, type);
      assert.equal(i.active, true);
      assert.equal(i.name, `My ${type}`);
      assert.match(i.created_at, timestampFormat);
      assert.deepEqual(i.project, { id: ada.project_id, name: 'Default', description: '' });
      for (const [k, v] of Object.entries(example.shown)) assert.deepEqual(i.config[k], v, `${type} config.${k}`);
      const read = await api('GET', `/integrations/${i.id}`);
      for (const text of [JSON.stringify(res.body), JSON.stringify(read.body)]) {
        for (const secret of example.secrets) assert.ok(!text.includes(secret), `${type} leaks ${secret}`);
      }
      const [row] = await cp.db.sql<
        { secrets_sealed: string; config: unknown }[]
      >`select secrets_sealed, config from integrations where id = ${i.id}`;
      for (const secret of example.secrets) assert.ok(!JSON.stringify(row).includes(secret), `${type} stores ${secret} in the clear`);
      const opened = JSON.parse(open(row!.secrets_sealed, cp.cp.keys.integrationSecrets));
      assert.ok(example.secrets.every((s) => JSON.stringify(opened).includes(s)));
    });
  }

  it('refuses an unknown or missing type with 422 on type', async () => {
    assertInvalid(await api('POST', '/integrations', { project_id: ada.project_id, name: 'x', type: 'carrier-pigeon', config: {} }), [
      'type',
    ]);
    const missing = await api('POST', '/integrations', { project_id: ada.project_id, name: 'x', config: {} });
    assertInvalid(missing, ['type']);
    assert.deepEqual(missing.body.errors.type, ['The type field is required.']);
  });

  const invalid: [string, string, Record<string, unknown>, string[]][] = [
    ['a webhook without a url', 'webhook', {}, ['config.url']],
    ['a webhook url of another scheme', 'webhook', { url: 'ftp://example.com/' }, ['config.url']],
    ['a short webhook secret', 'webhook', { url: 'https://example.com/', secret: 'short' }, ['config.secret']],
    [
      'a webhook header the service sets',
      'webhook',
      { url: 'https://example.com/', headers: { 'Content-Type': 'text/plain' } },
      ['config.headers.Content-Type'],
    ],
    ['an unknown setting', 'slack', { url: 'https://hooks.slack.com/x', channel: '#ops' }, ['config']],
    ['a telegram bot token of the wrong shape', 'telegram', { bot_token: 'nope', chat_id: '1' }, ['config.bot_token']],
    ['a telegram chat id of the wrong shape', 'telegram', { bot_token: botToken, chat_id: 'not a chat' }, ['config.chat_id']],
    ['an email without recipients', 'email', { recipients: [] }, ['config.recipients']],
    ['an email recipient that is not an address', 'email', { recipients: ['ops'] }, ['config.recipients.0']],
    ['a pagerduty routing key of the wrong shape', 'pagerduty', { routing_key: 'short' }, ['config.routing_key']],
    ['a pagerduty severity it does not know', 'pagerduty', { routing_key: routingKey, severity: 'meh' }, ['config.severity']],
    ['an ntfy topic with a slash', 'ntfy', { topic: 'a/b' }, ['config.topic']],
  ];
  for (const [what, type, config, fields] of invalid) {
    it(`refuses ${what}`, async () => {
      assertInvalid(await api('POST', '/integrations', { project_id: ada.project_id, name: 'x', type, config }), fields);
    });
  }

  it('requires project_id and name', async () => {
    assertInvalid(await api('POST', '/integrations', { type: 'slack', config: { url: 'https://hooks.slack.com/x' } }), [
      'project_id',
      'name',
    ]);
  });

  it('merges a PATCH into the stored settings: secrets left out are kept, null removes one', async () => {
    const created = (
      await api('POST', '/integrations', {
        project_id: ada.project_id,
        name: 'Hook',
        type: 'webhook',
        config: { url: sink.url, secret: 'first-signing-secret-1' },
      })
    ).body.data;
    const res = await api('PATCH', `/integrations/${created.id}`, {
      name: 'Renamed',
      active: false,
      config: { headers: { 'X-Team': 'ops' } },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.message, 'Integration updated successfully');
    assert.equal(res.body.data.name, 'Renamed');
    assert.equal(res.body.data.active, false);
    assert.equal(res.body.data.config.secret_set, true);
    assert.equal(res.body.data.config.headers_set, true);
    const [row] = await cp.db.sql<{ s: string }[]>`select secrets_sealed as s from integrations where id = ${created.id}`;
    assert.deepEqual(JSON.parse(open(row!.s, cp.cp.keys.integrationSecrets)), {
      url: sink.url,
      secret: 'first-signing-secret-1',
      headers: { 'X-Team': 'ops' },
    });

    const cleared = await api('PATCH', `/integrations/${created.id}`, { config: { secret: null } });
    assert.equal(cleared.body.data.config.secret_set, false);
    assertInvalid(await api('PATCH', `/integrations/${created.id}`, { config: { url: null } }), ['config.url']);
    assertInvalid(await api('PATCH', `/integrations/${created.id}`, { config: { url: 'nope' } }), ['config.url']);
    assertInvalid(await api('PATCH', `/integrations/${created.id}`, { type: 'slack' }), ['type']);
    assert.equal((await api('PATCH', `/integrations/${created.id}`, { type: 'webhook' })).status, 200);
  });

  it('deletes with 204, after which the integration is gone', async () => {
    const created = (await api('POST', '/integrations', { project_id: ada.project_id, name: 'Gone', type: 'ntfy', config: { topic: 't' } }))
      .body.data;
    assert.equal((await api('DELETE', `/integrations/${created.id}`)).status, 204);
    assert.equal((await api('GET', `/integrations/${created.id}`)).status, 404);
    assert.equal((await api('DELETE', `/integrations/${created.id}`)).status, 404);
  });

  describe('test send', () => {
    it('sends a test message now and answers with the delivery, which the delivery log shows', async () => {
      const created = (
        await api('POST', '/integrations', {
          project_id: ada.project_id,
          name: 'Probe hook',
          type: 'webhook',
          config: { url: `${sink.url}/test-hook` },
        })
      ).body.data;
      const before = sink.requests.length;
      const res = await api('POST', `/integrations/${created.id}/test`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.message, 'Test message delivered');
      assert.equal(res.body.data.delivered, true);
      assert.equal(res.body.data.error, null);
      const [req] = (await sink.waitForRequests(before + 1)).slice(before);
      assert.equal(req!.url, '/test-hook');
      assert.equal(req!.headers['idempotency-key'], res.body.data.delivery_id);
      const body = JSON.parse(req!.body);
      assert.equal(body.event, 'integration.test');
      assert.deepEqual(body.subject, { type: 'integration', id: created.id, name: 'Probe hook' });
      const log = await api('GET', `/integrations/${created.id}/deliveries`);
      assert.equal(log.status, 200);
      assert.equal(log.body.meta.total, 1);
      assert.equal(log.body.data[0].id, res.body.data.delivery_id);
      assert.equal(log.body.data[0].status, 'delivered');
      assert.equal(log.body.data[0].attempts, 1);
      assert.match(log.body.data[0].delivered_at, timestampFormat);
    });

    it('reports a refused test message with the reason and whether it would be retried', async () => {
      const failing = await startWebhookSink(500);
      const gone = await startWebhookSink(404);
      try {
        const a = (
          await api('POST', '/integrations', {
            project_id: ada.project_id,
            name: 'Down',
            type: 'slack',
            config: { url: `${failing.url}/services/T/B/slacksecret42` },
          })
        ).body.data;
        const r1 = await api('POST', `/integrations/${a.id}/test`);
        assert.equal(r1.body.data.delivered, false);
        assert.equal(r1.body.data.retryable, true);
        assert.match(r1.body.data.error, /HTTP 500 from 127\.0\.0\.1/);
        assert.ok(!r1.body.data.error.includes('slacksecret42'));
        const b = (
          await api('POST', '/integrations', {
            project_id: ada.project_id,
            name: 'Gone',
            type: 'discord',
            config: { url: `${gone.url}/api/webhooks/1/x` },
          })
        ).body.data;
        const r2 = await api('POST', `/integrations/${b.id}/test`);
        assert.equal(r2.body.data.retryable, false);
        const log = await api('GET', `/integrations/${b.id}/deliveries`);
        assert.equal(log.body.data[0].status, 'dead');
        assert.match(log.body.data[0].last_error, /HTTP 404/);
      } finally {
        await failing.close();
        await gone.close();
      }
    });
  });

  describe('tenancy', () => {
    let bob: TestAccount;
    let bobs: string;
    before(async () => {
      bob = await createAccount(cp.db.sql);
      bobs = (
        await apiClient(cp.url, bob.token)('POST', '/integrations', {
          project_id: bob.project_id,
          name: 'Bob',
          type: 'ntfy',
          config: { topic: 'bob' },
        })
      ).body.data.id;
    });

    it('answers 401 without a token', async () => {
      assert.equal((await apiClient(cp.url)('GET', '/integrations')).status, 401);
    });

    it("answers 403 for another tenant's project_id, in a list or a create", async () => {
      const list = await api('GET', `/integrations?project_id=${bob.project_id}`);
      assert.equal(list.status, 403);
      assert.deepEqual(list.body, { message: 'Unauthorized access' });
      const create = await api('POST', '/integrations', { project_id: bob.project_id, name: 'x', type: 'ntfy', config: { topic: 'x' } });
      assert.equal(create.status, 403);
    });

    it("answers 404 for another tenant's integration on every route", async () => {
      for (const [method, path, body] of [
        ['GET', `/integrations/${bobs}`],
        ['PATCH', `/integrations/${bobs}`, { name: 'mine' }],
        ['DELETE', `/integrations/${bobs}`],
        ['POST', `/integrations/${bobs}/test`],
        ['POST', `/integrations/${bobs}/preview`],
        ['GET', `/integrations/${bobs}/deliveries`],
        ['GET', '/integrations/not-a-uuid'],
      ] as const) {
        const res = await api(method, path, body);
        assert.equal(res.status, 404, `${method} ${path}`);
        assert.deepEqual(res.body, { message: 'Not found' });
      }
    });

    it("lists only the caller's integrations, 25 a page, oldest first", async () => {
      const carl = await createAccount(cp.db.sql);
      const carlApi = apiClient(cp.url, carl.token);
      for (let i = 0; i < 27; i++)
        await carlApi('POST', '/integrations', { project_id: carl.project_id, name: `n${i}`, type: 'ntfy', config: { topic: `t${i}` } });
      const p1 = await carlApi('GET', '/integrations');
      assert.equal(p1.body.data.length, 25);
      assert.deepEqual(p1.body.meta, { current_page: 1, per_page: 25, total: 27, last_page: 2 });
      assert.equal(p1.body.data[0].name, 'n0');
      const p2 = await carlApi('GET', `/integrations?project_id=${carl.project_id}&page=2`);
      assert.deepEqual(
        p2.body.data.map((i: { name: string }) => i.name),
        ['n25', 'n26'],
      );
      assertInvalid(await carlApi('GET', '/integrations?page=0'), ['page']);
    });
  });
});
