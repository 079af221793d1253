import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSql } from '../../control-plane/src/platform/db/sql.ts';
import { startControlPlane } from '../../control-plane/src/runtime/control-plane.ts';
import { apiClient, timestampFormat, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

describe('notify URL', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let hook: string;

  // The test server listens on a free port, not on TRIGGER_BASE_URL's: `url` is rebased onto it.
  const trigger = async (extra: Record<string, unknown> = {}) => {
    const t = (
      await api('POST', '/triggers', {
        project_id: ada.project_id,
        name: 'Deploys',
        default_message: 'Default text',
        integration_ids: [hook],
        ...extra,
      })
    ).body.data;
    assert.equal(t.url, `${cp.config.TRIGGER_BASE_URL}/api/notify/${t.id}`);
    return { id: t.id as string, token: t.token as string | undefined, url: `${cp.url}/api/notify/${t.id}` };
  };
  const call = (url: string, init: RequestInit = {}) =>
    fetch(url, init).then(async (res) => ({ res, body: (init.method === 'HEAD' ? null : await res.json()) as any }));
  const events = async (id: string) => (await api('GET', `/triggers/${id}/events`)).body;
  const counters = async (id: string) => {
    const t = (await api('GET', `/triggers/${id}`)).body.data;
    return { fire_count: t.fire_count as number, last_fired_at: t.last_fired_at as string | null };
  };

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    hook = (
      await api('POST', '/integrations', {
        project_id: ada.project_id,
        name: 'hook',
        type: 'webhook',
        config: { url: 'https://hooks.example.com/x' },
      })
    ).body.data.id;
  });
  after(() => cp.stop());

  describe('messages', () => {
    it('accepts a GET with the message in the query string and records the event, the counters and a delivery', async () => {
      const t = await trigger();
      const { res, body } = await call(`${t.url}?message=${encodeURIComponent('Deployed v1.2 ✅')}`, {
        headers: { 'user-agent': 'deploy-script/1' },
      });
      assert.equal(res.status, 202);
      assert.equal(body.message, 'Notification accepted');
      assert.deepEqual(Object.keys(body.data).sort(), ['event_id', 'integrations']);
      assert.equal(body.data.integrations, 1);
      const list = await events(t.id);
      assert.equal(list.meta.total, 1);
      const e = list.data[0];
      assert.equal(e.id, body.data.event_id);
      assert.equal(e.message, 'Deployed v1.2 ✅');
      assert.equal(e.outcome, 'dispatched');
      assert.equal(e.source_address, '127.0.0.1');
      assert.equal(e.user_agent, 'deploy-script/1');
      assert.match(e.fired_at, timestampFormat);
      assert.equal(e.deliveries.length, 1);
      assert.equal(e.deliveries[0].integration.id, hook);
      assert.equal(e.deliveries[0].status, 'pending');
      assert.equal(e.deliveries[0].event, 'trigger.fired');
      const c = await counters(t.id);
      assert.equal(c.fire_count, 1);
      assert.equal(c.last_fired_at, e.fired_at);
    });

    it('sends the default message when the call carries none (or an empty one)', async () => {
      const t = await trigger();
      assert.equal((await call(t.url)).res.status, 202);
      assert.equal((await call(`${t.url}?message=`, { method: 'POST' })).res.status, 202);
      const list = await events(t.id);
      assert.deepEqual(
        list.data.map((e: { message: string }) => e.message),
        ['Default text', 'Default text'],
      );
    });

    it('takes the message from a urlencoded form, a multipart form and a JSON body', async () => {
      const t = await trigger();
      const form = new FormData();
      form.append('message', 'from multipart');
      for (const init of [
        { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'message=from+a+form%21' },
        { method: 'POST', body: form },
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'from JSON' }) },
      ]) {
        const { res, body } = await call(t.url, init);
        assert.equal(res.status, 202, JSON.stringify(body));
      }
      const messages = (await events(t.id)).data.map((e: { message: string }) => e.message).reverse();
      assert.deepEqual(messages, ['from a form!', 'from multipart', 'from JSON']);
    });

    it('takes a text/plain body as the message itself', async () => {
      const t = await trigger();
      assert.equal((await call(t.url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'plain words' })).res.status, 202);
      assert.equal((await events(t.id)).data[0].message, 'plain words');
    });

    it('refuses a NUL character in the message, however it is sent', async () => {
      const t = await trigger();
      const form = new FormData();
      form.append('message', 'a\u0000b');
      for (const [url, init] of [
        [`${t.url}?message=a%00b`, {}],
        [t.url, { method: 'POST', body: form }],
        [t.url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'a\u0000b' }],
      ] as const) {
        const { res, body } = await call(url, init as RequestInit);
        assert.equal(res.status, 422);
        assert.equal(typeof body.message, 'string');
      }
    });

    it("prefers the body's message to the query string's", async () => {
      const t = await trigger();
      await call(`${t.url}?message=query`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'message=body',
      });
      assert.equal((await events(t.id)).data[0].message, 'body');
    });

    it('accepts 4000 characters and refuses 4001 with 422 on message, in every form', async () => {
      const t = await trigger();
      assert.equal((await call(`${t.url}?message=${'a'.repeat(4000)}`)).res.status, 202);
      // Characters, not bytes: 4000 two-byte characters fit (in a body: a query string that long outgrows the 16 KB request head).
      const wide = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'é'.repeat(4000) }) };
      assert.equal((await call(t.url, wide)).res.status, 202);
      const long = 'b'.repeat(4001);
      const form = new FormData();
      form.append('message', long);
      for (const [url, init] of [
        [`${t.url}?message=${long}`, {}],
        [t.url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `message=${long}` }],
        [t.url, { method: 'POST', body: form }],
        [t.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: long }) }],
      ] as const) {
        const { res, body } = await call(url, init as RequestInit);
        assert.equal(res.status, 422);
        assert.deepEqual(Object.keys(body.errors), ['message']);
        assert.match(body.message, /4000/);
      }
      assert.equal((await counters(t.id)).fire_count, 2);
    });

    it('refuses a message that is not a string with 422', async () => {
      const t = await trigger();
      for (const [url, init] of [
        [t.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"message": 42}' }],
        [`${t.url}?message=a&message=b`, {}],
      ] as const) {
        const { res, body } = await call(url, init as RequestInit);
        assert.equal(res.status, 422);
        assert.deepEqual(Object.keys(body.errors), ['message']);
      }
    });
    it('answers a body it cannot read with a 4xx and a message, never a 5xx', async () => {
      const t = await trigger();
      const file = new FormData();
      file.append('message', new Blob(['attached']), 'message.txt');
      for (const init of [
        { method: 'POST', body: file },
        { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: '--x\r\nbroken' },
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"message": ' },
      ]) {
        const { res, body } = await call(t.url, init as RequestInit);
        assert.ok(res.status >= 400 && res.status < 500, `${res.status} ${JSON.stringify(body)}`);
        assert.equal(typeof body.message, 'string');
      }
      assert.equal((await counters(t.id)).fire_count, 0);
    });
  });

  describe('tokens', () => {
    it('answers 401 without the token or with a wrong one, and accepts it as Bearer or ?token=', async () => {
      const t = await trigger({ token_protected: true });
      const unauthorized = [
        await call(t.url),
        await call(`${t.url}?token=uptt_wrong`),
        await call(t.url, { headers: { authorization: 'Bearer uptt_wrongwrongwrongwrong' } }),
        await call(t.url, { headers: { authorization: `Bearer ${ada.token}` } }),
        await call(t.url, { headers: { authorization: `Basic ${t.token}` } }),
        await call(`${t.url}?token=${t.token!.slice(0, -1)}`),
      ];
      for (const { res, body } of unauthorized) {
        assert.equal(res.status, 401);
        assert.deepEqual(body, { message: 'Unauthorized' });
      }
      assert.equal((await call(t.url, { headers: { authorization: `Bearer ${t.token}` } })).res.status, 202);
      assert.equal((await call(`${t.url}?token=${t.token}`, { method: 'POST' })).res.status, 202);
      assert.equal((await counters(t.id)).fire_count, 2);
    });

    it('stops accepting the old token once a new one is generated', async () => {
      const t = await trigger({ token_protected: true });
      const fresh = (await api('POST', `/triggers/${t.id}/token`)).body.data.token;
      assert.equal((await call(`${t.url}?token=${t.token}`)).res.status, 401);
      assert.equal((await call(`${t.url}?token=${fresh}`)).res.status, 202);
    });

    it('lets anyone fire an unprotected trigger, and refuses everyone once protection is on without a token', async () => {
      const t = await trigger();
      assert.equal((await call(t.url)).res.status, 202);
      await api('PATCH', `/triggers/${t.id}`, { token_protected: true });
      assert.equal((await call(t.url)).res.status, 401);
    });
  });

  describe('methods and ids', () => {
    it('answers other methods with 405, Allow: GET, POST, and fires nothing', async () => {
      const t = await trigger();
      for (const method of ['PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
        const { res, body } = await call(t.url, { method });
        assert.equal(res.status, 405, method);
        assert.equal(res.headers.get('allow'), 'GET, POST');
        assert.deepEqual(body, { message: 'Method not allowed' });
      }
      const head = await fetch(t.url, { method: 'HEAD' });
      assert.equal(head.status, 405);
      assert.equal(head.headers.get('allow'), 'GET, POST');
      assert.equal((await counters(t.id)).fire_count, 0);
    });

    it('answers 404 for an unknown or malformed id', async () => {
      for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
        const { res, body } = await call(`${cp.url}/api/notify/${id}?message=x`);
        assert.equal(res.status, 404);
        assert.deepEqual(body, { message: 'Not found' });
      }
    });
  });

  describe('paused triggers and integrations', () => {
    it('records a call of a paused trigger and sends nothing', async () => {
      const t = await trigger({ active: false });
      const { res, body } = await call(t.url);
      assert.equal(res.status, 202);
      assert.equal(body.data.integrations, 0);
      assert.match(body.message, /paused/);
      const e = (await events(t.id)).data[0];
      assert.equal(e.outcome, 'paused');
      assert.deepEqual(e.deliveries, []);
      assert.equal((await counters(t.id)).fire_count, 1);
    });

    it('sends only through active linked integrations, and nothing when none is active', async () => {
      const paused = (
        await api('POST', '/integrations', { project_id: ada.project_id, name: 'off', type: 'ntfy', active: false, config: { topic: 'x' } })
      ).body.data.id;
      const both = await trigger({ integration_ids: [hook, paused] });
      assert.equal((await call(both.url)).body.data.integrations, 1);
      const none = await trigger({ integration_ids: [paused] });
      const { res, body } = await call(none.url);
      assert.equal(res.status, 202);
      assert.equal(body.data.integrations, 0);
      assert.match(body.message, /no active integration/);
      assert.equal((await events(none.id)).data[0].outcome, 'no_integrations');
    });
  });

  describe('rate limits', () => {
    it('answers 429 with Retry-After over the limit, without counting the refused call', async () => {
      const t = await trigger({ rate_limit: { max: 2, per: 'day' } });
      assert.equal((await call(t.url)).res.status, 202);
      assert.equal((await call(t.url)).res.status, 202);
      const { res, body } = await call(t.url);
      assert.equal(res.status, 429);
      assert.equal(typeof body.message, 'string');
      const retryAfter = Number(res.headers.get('retry-after'));
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 86_400, String(retryAfter));
      assert.equal((await counters(t.id)).fire_count, 2);
      assert.equal((await events(t.id)).meta.total, 2);
    });

    it('holds under concurrent calls: exactly max of them are accepted', async () => {
      const t = await trigger({ rate_limit: { max: 5, per: 'day' } });
      const statuses = await Promise.all(Array.from({ length: 20 }, () => call(t.url).then((r) => r.res.status)));
      assert.equal(statuses.filter((s) => s === 202).length, 5);
      assert.equal(statuses.filter((s) => s === 429).length, 15);
      assert.equal((await counters(t.id)).fire_count, 5);
    });

    it('counts concurrent fires without losing one', async () => {
      const t = await trigger();
      await Promise.all(Array.from({ length: 15 }, () => call(t.url)));
      assert.equal((await counters(t.id)).fire_count, 15);
      assert.equal((await events(t.id)).meta.total, 15);
    });

    it('holds across control-plane processes sharing the database', async () => {
      const sql = createSql(cp.db.url, { log: quietLog, max: 2 });
      const second = await startControlPlane({ config: cp.config, log: quietLog, sql, nc: cp.nats.nc, roles: ['api'], port: 0 });
      try {
        const t = await trigger({ rate_limit: { max: 3, per: 'day' } });
        const urls = [t.url, `${second.url}/api/notify/${t.id}`];
        const statuses: number[] = [];
        for (let i = 0; i < 6; i++) statuses.push((await call(urls[i % 2]!)).res.status);
        assert.deepEqual(statuses, [202, 202, 202, 429, 429, 429]);
      } finally {
        await second.stop();
        await sql.end();
      }
    });

    it('starts counting afresh when the limit changes', async () => {
      const t = await trigger({ rate_limit: { max: 1, per: 'day' } });
      assert.equal((await call(t.url)).res.status, 202);
      assert.equal((await call(t.url)).res.status, 429);
      await api('PATCH', `/triggers/${t.id}`, { rate_limit: { max: 2, per: 'hour' } });
      assert.equal((await call(t.url)).res.status, 202);
    });
  });
});
