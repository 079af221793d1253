import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { IntegrationType, Notification } from '../../shared/src/contracts/notify.ts';
import { createHttpClient, type HttpClient } from '../../control-plane/src/notifications/channels/http.ts';
import { channelSpecs, createChannels, type Channels } from '../../control-plane/src/notifications/channels/index.ts';
import type { MessageTemplate } from '../../control-plane/src/notifications/templates.ts';
import { apiClient } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount } from '../harness/factories.ts';
import { startWebhookSink, type RecordedRequest, type Target } from '../harness/http.ts';
import { botToken, domainEvent, recordAlert, routingKey } from './helpers.ts';
import { startSmtpSink, type SmtpSink } from './smtp.ts';

const actions = {
  alert_id: randomUUID(),
  acknowledge_url: 'https://uptime.example.com/alerts/a1/acknowledge?sig=abc&exp=1',
  snooze_url: 'https://uptime.example.com/alerts/a1/snooze?sig=abc&exp=1',
  view_url: 'https://uptime.example.com/app/monitors/m1',
};

const down = (withActions: boolean, name = 'Shop'): Notification => ({
  id: randomUUID(),
  event: 'monitor.down',
  message: `Monitor "${name}" is down: HTTP 503 (expected 200-299). Failing regions: eu-west.`,
  occurred_at: '2026-03-02T10:00:00.000Z',
  project: { id: randomUUID(), name: 'Shop team' },
  subject: { type: 'monitor', id: randomUUID(), name },
  data: {
    url: 'https://shop.example.com/',
    regions: ['eu-west'],
    cause: 'HTTP 503 (expected 200-299)',
    started_at: '2026-03-02T09:58:30.000Z',
    evidence: [
      {
        region: 'eu-west',
        ok: false,
        status_code: 503,
        error: null,
        total_ms: 812,
        scheduled_at: '2026-03-02T09:58:30.000Z',
        abstained: false,
      },
      {
        region: 'us-east',
        ok: true,
        status_code: 200,
        error: null,
        total_ms: 95,
        scheduled_at: '2026-03-02T09:58:30.000Z',
        abstained: true,
      },
    ],
  },
  ...(withActions ? { actions } : {}),
});

const json = (r: RecordedRequest) => JSON.parse(r.body);

describe('messages people can act on', () => {
  let sink: Target;
  let smtp: SmtpSink;
  let http: HttpClient;
  let channels: Channels;

  const configs = (): Record<IntegrationType, Record<string, unknown>> => ({
    webhook: { url: `${sink.url}/webhook` },
    slack: { url: `${sink.url}/slack/T/B/token1234` },
    discord: { url: `${sink.url}/discord/api/webhooks/1/tok` },
    teams: { url: `${sink.url}/teams/hook` },
    telegram: { bot_token: botToken, chat_id: '42', api_base_url: `${sink.url}/telegram` },
    email: { recipients: ['ops@example.com'], smtp_url: smtp.url },
    pagerduty: { routing_key: routingKey, events_url: `${sink.url}/pagerduty` },
    ntfy: { server: `${sink.url}/ntfy`, topic: 'ops' },
  });

  /** Sends one notification through a channel to the local receivers and returns what the sink recorded. */
  const send = async (
    type: Exclude<IntegrationType, 'email'>,
    n: Notification,
    template?: MessageTemplate,
    extra: Record<string, unknown> = {},
  ): Promise<RecordedRequest> => {
    const from = sink.requests.length;
    await channels[type].send({
      id: randomUUID(),
      attempt: 1,
      notification: n,
      integration: { id: randomUUID(), name: type },
      config: channelSpecs[type].config.parse({ ...configs()[type], ...extra }),
      template,
    });
    const got = (await sink.waitForRequests(from + 1)).slice(from);
    assert.equal(got.length, 1);
    return got[0]!;
  };

  before(async () => {
    sink = await startWebhookSink();
    smtp = await startSmtpSink();
    http = createHttpClient({ blockPrivateTargets: false, timeoutMs: 5_000 });
    channels = createChannels({ http, smtp: { url: undefined, from: 'alerts@uptime.test' }, now: () => new Date() });
  });
  after(async () => {
    await http.close();
    await sink.close();
    await smtp.close();
  });

  describe('the action links of an open alert', () => {
    it('gives Slack an actions block of link buttons, Acknowledge first and primary, and none without actions', async () => {
      const body = json(await send('slack', down(true)));
      const block = body.blocks.find((b: { type: string }) => b.type === 'actions');
      assert.deepEqual(block.elements, [
        {
          type: 'button',
          action_id: 'acknowledge',
          text: { type: 'plain_text', text: 'Acknowledge' },
          url: actions.acknowledge_url,
          style: 'primary',
        },
        { type: 'button', action_id: 'snooze', text: { type: 'plain_text', text: 'Snooze' }, url: actions.snooze_url },
        { type: 'button', action_id: 'view', text: { type: 'plain_text', text: 'View' }, url: actions.view_url },
      ]);
      assert.equal(body.blocks.at(-1).type, 'context');
      const plain = json(await send('slack', down(false)));
      assert.ok(!plain.blocks.some((b: { type: string }) => b.type === 'actions'));
    });

    it('gives Discord link buttons in an action row and asks for components in the URL, only when there are actions', async () => {
      const got = await send('discord', down(true));
      assert.equal(got.url, '/discord/api/webhooks/1/tok?with_components=true');
      assert.deepEqual(json(got).components, [
        {
          type: 1,
          components: [
            { type: 2, style: 5, label: 'Acknowledge', url: actions.acknowledge_url },
            { type: 2, style: 5, label: 'Snooze', url: actions.snooze_url },
            { type: 2, style: 5, label: 'View', url: actions.view_url },
          ],
        },
      ]);
      const plain = await send('discord', down(false));
      assert.equal(plain.url, '/discord/api/webhooks/1/tok');
      assert.equal(json(plain).components, undefined);
    });

    it('keeps a query the Discord URL already has when it asks for components', async () => {
      const got = await send('discord', down(true), undefined, { url: `${sink.url}/discord/api/webhooks/1/tok?thread_id=9` });
      assert.equal(got.url, '/discord/api/webhooks/1/tok?thread_id=9&with_components=true');
    });

    it('gives Telegram a row of URL buttons under the message', async () => {
      const body = json(await send('telegram', down(true)));
      assert.deepEqual(body.reply_markup, {
        inline_keyboard: [
          [
            { text: 'Acknowledge', url: actions.acknowledge_url },
            { text: 'Snooze', url: actions.snooze_url },
            { text: 'View', url: actions.view_url },
          ],
        ],
      });
      assert.equal(json(await send('telegram', down(false))).reply_markup, undefined);
    });

    it('gives Teams Action.OpenUrl buttons before the link to the monitored URL', async () => {
      const card = json(await send('teams', down(true))).attachments[0].content;
      assert.deepEqual(
        card.actions.map((a: { type: string; title: string; url: string }) => [a.type, a.title, a.url]),
        [
          ['Action.OpenUrl', 'Acknowledge', actions.acknowledge_url],
          ['Action.OpenUrl', 'Snooze', actions.snooze_url],
          ['Action.OpenUrl', 'View', actions.view_url],
          ['Action.OpenUrl', 'Open', 'https://shop.example.com/'],
        ],
      );
      assert.equal(json(await send('teams', down(false))).attachments[0].content.actions.length, 1);
    });

    it('gives ntfy view actions, or with acknowledge=post an http action that acknowledges in one tap', async () => {
      assert.deepEqual(json(await send('ntfy', down(true))).actions, [
        { action: 'view', label: 'Acknowledge', url: actions.acknowledge_url },
        { action: 'view', label: 'Snooze', url: actions.snooze_url },
        { action: 'view', label: 'View', url: actions.view_url },
      ]);
      const post = json(await send('ntfy', down(true), undefined, { acknowledge: 'post' }));
      assert.deepEqual(post.actions[0], {
        action: 'http',
        label: 'Acknowledge',
        url: actions.acknowledge_url,
        method: 'POST',
        clear: true,
      });
      assert.equal(post.actions[1].action, 'view');
      assert.equal(json(await send('ntfy', down(false))).actions, undefined);
    });

    it('gives PagerDuty links to act in uptime after the monitored URL', async () => {
      assert.deepEqual(json(await send('pagerduty', down(true))).links, [
        { href: 'https://shop.example.com/', text: 'Shop' },
        { href: actions.acknowledge_url, text: 'Acknowledge in uptime' },
        { href: actions.snooze_url, text: 'Snooze in uptime' },
        { href: actions.view_url, text: 'View in uptime' },
      ]);
      assert.deepEqual(json(await send('pagerduty', down(false))).links, [{ href: 'https://shop.example.com/', text: 'Shop' }]);
    });

    it('hands a webhook the actions inside the notification, and no actions key without them', async () => {
      const n = down(true);
      const body = json(await send('webhook', n));
      assert.deepEqual(body, n);
      assert.deepEqual(body.actions, actions);
      assert.ok(!('actions' in json(await send('webhook', down(false)))));
    });

    it('mails HTML buttons and the links as lines of the text part', async () => {
      const before = smtp.messages.length;
      for (const withActions of [true, false]) {
        await channels.email.send({
          id: randomUUID(),
          attempt: 1,
          notification: down(withActions, withActions ? 'Shop' : 'Plain shop'),
          integration: { id: randomUUID(), name: 'mail' },
          config: channelSpecs.email.config.parse(configs().email),
        });
      }
      const [mail, plain] = (await smtp.waitForMessages(before + 2)).slice(before);
      assert.ok(mail!.text.includes(`Acknowledge: ${actions.acknowledge_url}`));
      assert.ok(mail!.text.includes(`Snooze: ${actions.snooze_url}`));
      assert.ok(mail!.text.includes(`View: ${actions.view_url}`));
      assert.ok(mail!.text.includes(`<a href="${actions.acknowledge_url.replace(/&/g, '&amp;')}" style="`));
      assert.ok(!plain!.text.includes('Acknowledge'));
    });
  });

  describe('what failed, where and since when', () => {
    it('lists the cause, the regions, what each region saw and when it went down', async () => {
      const body = json(await send('slack', down(true)));
      const fields = body.blocks[2].fields.map((f: { text: string }) => f.text);
      assert.deepEqual(fields, [
        '*URL*\nhttps://shop.example.com/',
        '*Regions*\neu-west',
        '*Cause*\nHTTP 503 (expected 200-299)',
        '*Evidence*\neu-west: HTTP 503 (812 ms); us-east: passed (abstained)',
        '*Down since*\n2026-03-02T09:58:30.000Z',
      ]);
    });
  });

  it('lists the same for a regional incident, with when the regions began failing', async () => {
    const n = down(false);
    const body = json(await send('slack', { ...n, event: 'monitor.regional_down', data: { ...n.data, scope: 'regional' } }));
    const fields = body.blocks[2].fields.map((f: { text: string }) => f.text);
    assert.deepEqual(fields, [
      '*URL*\nhttps://shop.example.com/',
      '*Regions*\neu-west',
      '*Cause*\nHTTP 503 (expected 200-299)',
      '*Evidence*\neu-west: HTTP 503 (812 ms); us-east: passed (abstained)',
      '*Failing since*\n2026-03-02T09:58:30.000Z',
    ]);
  });

  describe('templates', () => {
    const name = '<b>*Shop_1*</b> & [x](y)';
    const template = { title: '{{subject.name}} down', body: '*{{subject.name}}* fails: {{cause}}\n{{acknowledge_url}}' };

    it("escapes values for Slack mrkdwn and keeps the template's own markup", async () => {
      const body = json(await send('slack', down(true, name), template));
      assert.equal(body.blocks[0].text.text, `🔴 ${name} down`);
      assert.equal(
        body.blocks[1].text.text,
        `*&lt;b&gt;*Shop_1*&lt;/b&gt; &amp; [x](y)* fails: HTTP 503 (expected 200-299)\n${actions.acknowledge_url.replace(/&/g, '&amp;')}`,
      );
      assert.ok(
        body.blocks.some((b: { type: string }) => b.type === 'actions'),
        'the buttons stay',
      );
      assert.equal(body.blocks[2].fields[0].text, '*URL*\nhttps://shop.example.com/', 'the facts stay');
    });

    it('escapes values for Discord markdown and leaves link values whole', async () => {
      const embed = json(await send('discord', down(true, name), template)).embeds[0];
      assert.equal(embed.title, '🔴 <b>\\*Shop\\_1\\*</b> & \\[x\\](y) down');
      assert.equal(
        embed.description,
        `*<b>\\*Shop\\_1\\*</b> & \\[x\\](y)* fails: HTTP 503 (expected 200-299)\n${actions.acknowledge_url}`,
      );
    });

    it('escapes values for Telegram HTML', async () => {
      const text = json(await send('telegram', down(true, name), template)).text as string;
      assert.ok(text.startsWith('<b>🔴 &lt;b&gt;*Shop_1*&lt;/b&gt; &amp; [x](y) down</b>\n*&lt;b&gt;*Shop_1*'), text);
    });

    it('takes a template as plain text in ntfy, PagerDuty and the webhook body', async () => {
      const ntfy = json(await send('ntfy', down(true, name), template));
      assert.equal(ntfy.title, `${name} down`);
      assert.ok(ntfy.message.startsWith(`*${name}* fails: HTTP 503 (expected 200-299)\n${actions.acknowledge_url}\n\nURL: `));
      const pd = json(await send('pagerduty', down(true, name), template));
      assert.equal(pd.payload.summary, `*${name}* fails: HTTP 503 (expected 200-299)\n${actions.acknowledge_url}`);
      assert.equal(pd.payload.custom_details.message, down(true, name).message, 'the standard message stays in the details');
      const hook = json(await send('webhook', down(true, name), template));
      assert.equal(hook.title, `${name} down`);
      assert.equal(hook.message, `*${name}* fails: HTTP 503 (expected 200-299)\n${actions.acknowledge_url}`);
      assert.deepEqual(hook.actions, actions);
    });

    it('escapes a template whole in the HTML part of an email, line breaks kept', async () => {
      const before = smtp.messages.length;
      await channels.email.send({
        id: randomUUID(),
        attempt: 1,
        notification: down(true, name),
        integration: { id: randomUUID(), name: 'mail' },
        config: channelSpecs.email.config.parse(configs().email),
        template,
      });
      const [mail] = (await smtp.waitForMessages(before + 1)).slice(before);
      assert.equal(mail!.headers.subject, `🔴 ${name} down`);
      assert.ok(mail!.text.includes(`<p>*&lt;b&gt;*Shop_1*&lt;/b&gt; &amp; [x](y)* fails: HTTP 503 (expected 200-299)<br>`), mail!.text);
    });
  });

  describe('a template through the delivery worker', () => {
    let cp: TestControlPlane;
    before(async () => {
      cp = await startTestControlPlane({ roles: ['api', 'notify'] });
    });
    after(() => cp.stop());

    it("words what the worker sends with the integration's template", async () => {
      const ada = await createAccount(cp.db.sql);
      const api = apiClient(cp.url, ada.token);
      const created = await api('POST', '/integrations', {
        project_id: ada.project_id,
        name: 'Ops',
        type: 'slack',
        config: { url: `${sink.url}/slack/worker/token5678` },
        template: { title: '{{subject.name}} is {{status}}', body: 'Since {{since}} in {{regions}}: {{cause}} ({{evidence}})' },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const from = sink.requests.length;
      await recordAlert(
        cp,
        domainEvent(ada.project_id, {
          kind: 'monitor.down',
          subject: { type: 'monitor', id: randomUUID(), name: 'Checkout' },
          data: down(false).data,
        }),
      );
      const [got] = (await sink.waitForRequests(from + 1)).slice(from);
      const body = json(got!);
      assert.equal(body.blocks[0].text.text, '🔴 Checkout is down');
      assert.equal(
        body.blocks[1].text.text,
        'Since 2026-03-02T09:58:30.000Z in eu-west: HTTP 503 (expected 200-299) (eu-west: HTTP 503 (812 ms); us-east: passed (abstained))',
      );
    });
  });
});
