import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient, assertInvalid, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startWebhookSink, type RecordedRequest, type Target } from '../harness/http.ts';
import { manualClock } from '../heartbeats/manual-clock.ts';
import { botToken, channelPaths, everyChannel, routingKey, webhookSecret, type HttpChannel } from '../notify/helpers.ts';
import { startSmtpSink, type SmtpSink } from '../notify/smtp.ts';

interface Shown {
  kind: 'http' | 'email';
  url: string;
  headers: Record<string, string>;
  body: string;
  subject: string;
  text: string;
  html: string;
  smtp_url: string | null;
}

/** Every secret `everyChannel` configures (the sink's address itself holds none). */
const secrets = [webhookSecret, botToken, routingKey, 'tk_ntfytoken', 'slacktoken', 'discordtoken', 'teamstoken'];
const httpChannels = Object.keys(channelPaths) as HttpChannel[];
const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

describe('message templates, previews and test sends', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let sink: Target;
  let smtp: SmtpSink;
  let ids: Record<string, string>;
  const clock = manualClock(Date.parse('2026-03-02T10:00:00.000Z'));

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'], clock, env: { PUBLIC_URL: 'https://uptime.example.com' } });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    sink = await startWebhookSink();
    smtp = await startSmtpSink();
    ids = await everyChannel(api, ada.project_id, sink.url, smtp.url);
  });
  after(async () => {
    await sink.close();
    await smtp.close();
    await cp.stop();
  });

  const preview = async (type: string, body?: Record<string, unknown>) => {
    const res = await api('POST', `/integrations/${ids[type]}/preview`, body);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.data as { notification: Record<string, any>; requests: Shown[] };
  };

  describe('templates through the API', () => {
    it('stores a template on create, shows it on read, replaces it on PATCH and drops it with null', async () => {
      const created = await api('POST', '/integrations', {
        project_id: ada.project_id,
        name: 'Templated',
        type: 'ntfy',
        config: { topic: 'tpl' },
        template: { title: '{{subject.name}} is {{status}}', body: 'Since {{ since }}: {{cause}}' },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.deepEqual(created.body.data.template, { title: '{{subject.name}} is {{status}}', body: 'Since {{ since }}: {{cause}}' });
      const id = created.body.data.id;
      assert.deepEqual((await api('GET', `/integrations/${id}`)).body.data.template, created.body.data.template);

      const patched = await api('PATCH', `/integrations/${id}`, { template: { body: '{{message}}' } });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      assert.deepEqual(patched.body.data.template, { body: '{{message}}' });
      assert.deepEqual((await api('PATCH', `/integrations/${id}`, { name: 'Renamed' })).body.data.template, { body: '{{message}}' });
      assert.equal((await api('PATCH', `/integrations/${id}`, { template: null })).body.data.template, null);
      assert.equal((await api('PATCH', `/integrations/${id}`, { template: { title: '', body: '' } })).body.data.template, null);
      const plain = await api('POST', '/integrations', { project_id: ada.project_id, name: 'Plain', type: 'ntfy', config: { topic: 'p' } });
      assert.equal(plain.body.data.template, null);
    });

    const invalid: [string, Record<string, unknown>, string, RegExp][] = [
      ['an unknown variable', { body: 'Down: {{monitor.password}}' }, 'template.body', /unknown variable \{\{monitor\.password\}\}/],
      ['a tag left open', { title: '{{subject.name is down' }, 'template.title', /\{\{ without its \}\} at character 1/],
      ['a closing pair without its opening', { body: 'x }} y' }, 'template.body', /\}\} without its \{\{ at character 3/],
      ['an empty tag', { body: 'a {{ }} b' }, 'template.body', /empty tag at character 3/],
      ['a nested tag', { body: '{{{{title}}}}' }, 'template.body', /without its/],
      ['a body that is too long', { body: 'x'.repeat(2001) }, 'template.body', /not be greater than 2000 characters/],
      ['a title of two lines', { title: 'one\ntwo' }, 'template.title', /must be one line/],
      ['a title that is too long', { title: 'x'.repeat(201) }, 'template.title', /not be greater than 200 characters/],
      ['a part that is not text', { body: 42 }, 'template.body', /must be a string/],
    ];
    for (const [what, template, field, message] of invalid) {
      it(`refuses ${what} with a 422 naming ${field}, on create, on PATCH and in a preview`, async () => {
        const create = await api('POST', '/integrations', {
          project_id: ada.project_id,
          name: 'x',
          type: 'slack',
          config: { url: 'https://hooks.slack.com/services/T/B/x' },
          template,
        });
        assertInvalid(create, [field]);
        assert.match(create.body.errors[field][0], message);
        if (typeof template.body === 'string' || typeof template.title === 'string')
          assert.match(create.body.errors[field][0], new RegExp(`^The ${field.replace('.', '\\.')} field`));
        assertInvalid(await api('PATCH', `/integrations/${ids.slack}`, { template }), [field]);
        assertInvalid(await api('POST', `/integrations/${ids.slack}/preview`, { template }), [field]);
        assertInvalid(await api('POST', `/integrations/${ids.slack}/test`, { template }), [field]);
      });
    }

    it('refuses parts a template does not have, and a preview of an event it has no sample of', async () => {
      assertInvalid(await api('PATCH', `/integrations/${ids.slack}`, { template: { footer: 'x' } }), ['template']);
      assertInvalid(await api('POST', `/integrations/${ids.slack}/preview`, { event: 'monitor.up' }), ['event']);
    });
  });

  describe('previews', () => {
    it('shows, for every channel, the request(s) of a sample outage with its action links, and no secret', async () => {
      for (const type of Object.keys(ids)) {
        const p = await preview(type);
        assert.equal(p.notification.event, 'monitor.down');
        assert.ok(p.notification.actions.acknowledge_url.startsWith('https://uptime.example.com/app/alerts/'));
        assert.equal(p.requests.length, 1, type);
        const text = JSON.stringify(p);
        for (const s of secrets) assert.ok(!text.includes(s), `${type}: the preview shows ${s}`);
        assert.ok(text.includes(JSON.stringify(p.notification.actions.acknowledge_url).slice(1, -1)), `${type}: no acknowledge link`);
      }
    });

    it('redacts secret URLs, tokens and credential headers, and keeps the rest as sent', async () => {
      const [slack] = (await preview('slack')).requests;
      assert.equal(slack!.url, `${sink.url}/[redacted]`);
      assert.equal(slack!.headers['content-type'], 'application/json');
      assert.match(slack!.headers['user-agent']!, /^uptime-notify\//);
      const [discord] = (await preview('discord')).requests;
      assert.equal(discord!.url, `${sink.url}/[redacted]?with_components=true`);
      const [telegram] = (await preview('telegram')).requests;
      assert.equal(telegram!.url, `${sink.url}/telegram/bot[redacted]/sendMessage`);
      const [ntfy] = (await preview('ntfy')).requests;
      assert.equal(ntfy!.url, `${sink.url}/ntfy/`);
      assert.equal(ntfy!.headers.authorization, '[redacted]');
      const [pd] = (await preview('pagerduty')).requests;
      assert.equal(JSON.parse(pd!.body).routing_key, '[redacted]');
      const [hook] = (await preview('webhook')).requests;
      assert.equal(hook!.url, `${sink.url}/[redacted]`);
      assert.match(hook!.headers['x-uptime-signature']!, /^sha256=[0-9a-f]{64}$/);
      const [mail] = (await preview('email')).requests;
      assert.equal(mail!.kind, 'email');
      assert.equal(mail!.smtp_url, smtp.url);
      assert.match(mail!.subject, /Sample monitor is down/);
    });

    it('says in the sample what failed, where, what each region saw and since when', async () => {
      const p = await preview('slack');
      const fields = JSON.parse(p.requests[0]!.body).blocks[2].fields.map((f: { text: string }) => f.text);
      assert.ok(fields.includes('*Cause*\nHTTP 503 (expected 200-299)'));
      assert.ok(fields.includes('*Regions*\neu-west, us-east'));
      assert.ok(fields.includes('*Evidence*\nap-south: passed; eu-west: HTTP 503 (812 ms); us-east: HTTP 503 (655 ms)'));
      assert.ok(fields.includes(`*Down since*\n${p.notification.data.started_at}`));
    });

    it('words the preview with an unsaved template, without saving it; null shows the standard wording', async () => {
      const template = { title: '{{subject.name}} down', body: '*{{subject.name}}* fails in {{regions}} <{{acknowledge_url}}|ack>' };
      const body = JSON.parse((await preview('slack', { template })).requests[0]!.body);
      assert.equal(body.blocks[0].text.text, '🔴 Sample monitor down');
      assert.equal(
        body.blocks[1].text.text,
        `*Sample monitor* fails in eu-west, us-east <https://uptime.example.com/app/alerts/00000000-0000-4000-8000-000000000002/acknowledge?sig=sample|ack>`,
      );
      assert.equal((await api('GET', `/integrations/${ids.slack}`)).body.data.template, null);
      const standard = JSON.parse((await preview('slack', { template: null })).requests[0]!.body);
      assert.equal(standard.blocks[0].text.text, '🔴 Monitor Sample monitor is down');
    });

    it('previews the test message when asked, without actions', async () => {
      const p = await preview('telegram', { event: 'integration.test' });
      assert.equal(p.notification.event, 'integration.test');
      assert.equal(p.notification.actions, undefined);
      assert.equal(JSON.parse(p.requests[0]!.body).reply_markup, undefined);
    });
  });

  describe('test sends', () => {
    const received = async (from: number) => (await sink.waitForRequests(from + 1)).slice(from);
    /** A shown request with the receiver's secrets put back where the preview redacted them. */
    const redactedAsShown = (r: RecordedRequest, shown: Shown) => {
      let body = r.body;
      for (const s of secrets) body = body.split(s).join('[redacted]');
      return {
        body,
        headers: Object.fromEntries(
          Object.keys(shown.headers).map((k) => [k, shown.headers[k] === '[redacted]' ? '[redacted]' : String(r.headers[k])]),
        ),
      };
    };

    for (const type of httpChannels) {
      it(`sends ${type} what its preview shows, byte for byte, and answers with what it sent`, async () => {
        const template = { title: 'Alert: {{subject.name}}', body: '{{cause}} since {{since}}' };
        const shown = (await preview(type, { template })).requests[0]!;
        const from = sink.requests.length;
        const res = await api('POST', `/integrations/${ids[type]}/test`, { event: 'monitor.down', template });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.equal(res.body.data.delivered, true, JSON.stringify(res.body.data));
        const [sent] = res.body.data.sent as Shown[];
        const [got] = await received(from);
        // What the receiver got is what the test answered with (secrets aside)...
        const asShown = redactedAsShown(got!, sent!);
        assert.equal(asShown.body, sent!.body);
        assert.deepEqual(asShown.headers, sent!.headers);
        assert.equal(got!.method, 'POST');
        assert.ok(got!.url.startsWith(channelPaths[type]), got!.url);
        // ...and is what the preview showed, but for the ids each call makes anew.
        assert.equal(sent!.url, shown.url);
        assert.equal(sent!.body.replace(uuid, 'ID'), shown.body.replace(uuid, 'ID'));
        for (const s of secrets) assert.ok(!JSON.stringify(res.body).includes(s), `${type}: the answer shows ${s}`);
      });
    }

    it('mails what the preview of an email integration shows', async () => {
      const shown = (await preview('email')).requests[0]!;
      const before = smtp.messages.length;
      const res = await api('POST', `/integrations/${ids.email}/test`, { event: 'monitor.down' });
      assert.equal(res.body.data.delivered, true, JSON.stringify(res.body.data));
      const [mail] = (await smtp.waitForMessages(before + 1)).slice(before);
      const [sent] = res.body.data.sent as Shown[];
      assert.equal(mail!.headers.subject, shown.subject);
      assert.equal(sent!.subject, shown.subject);
      assert.equal(sent!.html, shown.html);
      assert.equal(mail!.headers['message-id'], `<${res.body.data.delivery_id}@uptime.notify>`);
      for (const line of sent!.text.split('\n').filter(Boolean)) assert.ok(mail!.text.includes(line), `the mail lacks "${line}"`);
    });

    it('still sends the plain test message when no body is given', async () => {
      const from = sink.requests.length;
      const res = await api('POST', `/integrations/${ids.ntfy}/test`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const [got] = await received(from);
      assert.equal(JSON.parse(got!.body).title, 'Test notification');
      assert.equal(res.body.data.sent[0].headers.authorization, '[redacted]');
    });
  });
});
