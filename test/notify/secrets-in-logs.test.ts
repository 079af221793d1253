import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { loadConfig } from '../../shared/src/config.ts';
import { createLogger } from '../../shared/src/logger.ts';
import { startControlPlane, type RunningControlPlane } from '../../control-plane/src/runtime/control-plane.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { createTestDatabase, type TestDatabase } from '../harness/db.ts';
import { createAccount } from '../harness/factories.ts';
import { startWebhookSink, type Target } from '../harness/http.ts';
import { createTestNats, type TestNats } from '../harness/nats.ts';
import { eventually } from '../harness/streams.ts';
import { botToken } from './helpers.ts';

describe('secrets and logs', () => {
  let db: TestDatabase;
  let nats: TestNats;
  let cp: RunningControlPlane;
  let api: Call;
  let failing: Target;
  let projectId: string;
  const lines: string[] = [];

  before(async () => {
    db = await createTestDatabase();
    nats = await createTestNats();
    failing = await startWebhookSink(500);
    const log = createLogger({
      level: 'trace',
      destination: new Writable({
        write(chunk, _enc, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    });
    const config = loadConfig({
      DATABASE_URL: db.url,
      NATS_URL: nats.url,
      NATS_NAMESPACE: nats.namespace,
      SECRET_KEY: randomBytes(32).toString('base64url'),
      NOTIFY_MAX_ATTEMPTS: '2',
    });
    cp = await startControlPlane({
      config,
      log,
      sql: db.sql,
      nc: nats.nc,
      roles: ['api', 'notify'],
      port: 0,
      notify: { backoffBaseMs: 50 },
    });
    const ada = await createAccount(db.sql);
    projectId = ada.project_id;
    api = apiClient(cp.url!, ada.token);
  });
  after(async () => {
    await cp.stop();
    await failing.close();
    await nats.close();
    await db.drop();
  });

  it('keeps trigger tokens and integration secrets out of every log line, even when deliveries fail', async () => {
    const secrets = ['slack-secret-token-42', botToken, 'hdr-secret-77', 'signing-secret-0123456789'];
    const ids = [
      (
        await api('POST', '/integrations', {
          project_id: projectId,
          name: 's',
          type: 'slack',
          config: { url: `${failing.url}/services/T/B/slack-secret-token-42` },
        })
      ).body.data.id,
      (
        await api('POST', '/integrations', {
          project_id: projectId,
          name: 't',
          type: 'telegram',
          config: { bot_token: botToken, chat_id: '1', api_base_url: failing.url },
        })
      ).body.data.id,
      (
        await api('POST', '/integrations', {
          project_id: projectId,
          name: 'w',
          type: 'webhook',
          config: { url: failing.url, secret: 'signing-secret-0123456789', headers: { Authorization: 'Bearer hdr-secret-77' } },
        })
      ).body.data.id,
    ];
    const trigger = (
      await api('POST', '/triggers', {
        project_id: projectId,
        name: 'x',
        default_message: 'm',
        token_protected: true,
        integration_ids: ids,
      })
    ).body.data;
    secrets.push(trigger.token);
    assert.equal((await fetch(`${cp.url}/api/notify/${trigger.id}?token=${trigger.token}&message=hello`)).status, 202);
    assert.equal((await fetch(`${cp.url}/api/notify/${trigger.id}?token=uptt_wrong`)).status, 401);
    // A call no route takes (a wrong method, a mistyped address) is logged too, token and all.
    assert.equal((await fetch(`${cp.url}/api/notify/${trigger.id}?token=${trigger.token}`, { method: 'HEAD' })).status, 405);
    assert.equal((await fetch(`${cp.url}/api/notify/${trigger.id}?message=x&token=${trigger.token}`, { method: 'PUT' })).status, 405);
    assert.equal((await fetch(`${cp.url}/api/notify/${trigger.id}/?token=${trigger.token}`)).status, 404);
    await api('POST', `/integrations/${ids[0]}/test`);
    await eventually(
      async () => (await db.sql`select 1 from deliveries where status = 'dead' and kind = 'trigger.fired'`).length === 3,
      'the deliveries to die',
    );
    const text = lines.join('');
    assert.match(text, /delivery dead/);
    assert.match(text, /\/api\/notify\//);
    for (const s of secrets) assert.ok(!text.includes(s), `a log line holds ${s.slice(0, 12)}…`);
  });

  it('keeps integration secrets out of previews, test sends and every log line they make', async () => {
    const secrets = ['preview-slack-token-42', 'preview-hdr-secret-77', 'preview-signing-secret-0123', 'tk_preview_ntfy_token'];
    const made = await Promise.all(
      [
        { type: 'slack', config: { url: `${failing.url}/services/T/B/preview-slack-token-42` } },
        {
          type: 'webhook',
          config: { url: failing.url, secret: 'preview-signing-secret-0123', headers: { 'X-Api-Key': 'preview-hdr-secret-77' } },
        },
        { type: 'ntfy', config: { server: failing.url, topic: 'ops', token: 'tk_preview_ntfy_token' } },
        { type: 'telegram', config: { bot_token: botToken, chat_id: '1', api_base_url: failing.url } },
      ].map((i) => api('POST', '/integrations', { project_id: projectId, name: `p-${i.type}`, ...i })),
    );
    const answers: string[] = [];
    for (const res of made) {
      const id = res.body.data.id as string;
      const template = { body: '{{message}} {{acknowledge_url}}' };
      answers.push(JSON.stringify((await api('POST', `/integrations/${id}/preview`, { template })).body));
      const test = await api('POST', `/integrations/${id}/test`, { event: 'monitor.down', template });
      assert.equal(test.body.data.delivered, false);
      answers.push(JSON.stringify(test.body));
    }
    const text = lines.join('');
    for (const s of [...secrets, botToken]) {
      assert.ok(!text.includes(s), `a log line holds ${s.slice(0, 12)}…`);
      for (const a of answers) assert.ok(!a.includes(s), `an answer holds ${s.slice(0, 12)}…: ${a.slice(0, 200)}`);
    }
  });
});
