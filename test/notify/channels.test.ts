import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startWebhookSink, type RecordedRequest, type Target } from '../harness/http.ts';
import { eventually } from '../harness/streams.ts';
import { botToken, byChannel, deliveryRows, domainEvent, everyChannel, recordAlert, routingKey, webhookSecret } from './helpers.ts';
import { startSmtpSink, type SmtpSink } from './smtp.ts';

const json = (r: RecordedRequest) => JSON.parse(r.body);

describe('what each channel sends', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let smtp: SmtpSink;
  const sinks: Target[] = [];

  /** A fresh project with every channel, and a sink of its own. */
  const scenario = async (name: string) => {
    const sink = await startWebhookSink();
    sinks.push(sink);
    const projectId = (await api('POST', '/projects', { name })).body.data.id as string;
    const ids = await everyChannel(api, projectId, sink.url, smtp.url);
    return { sink, projectId, ids };
  };
  const mailsTo = (projectName: string) => smtp.messages.filter((m) => m.text.includes(`Project ${projectName}`));

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api', 'notify'], env: { SMTP_FROM: 'alerts@uptime.test' } });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    smtp = await startSmtpSink();
  });
  after(async () => {
    for (const s of sinks) await s.close();
    await smtp.close();
    await cp.stop();
  });

  describe('a trigger message', () => {
    const message = 'Deploy of <api> finished & healthy';
    let got: Record<string, RecordedRequest[]>;
    let eventId: string;
    let projectId: string;
    let triggerId: string;
    let deliveryIds: Map<string, string>;

    before(async () => {
      const s = await scenario('Triggers');
      projectId = s.projectId;
      const trigger = (
        await api('POST', '/triggers', {
          project_id: projectId,
          name: 'Deploys',
          default_message: 'x',
          integration_ids: Object.values(s.ids),
        })
      ).body.data;
      triggerId = trigger.id;
      const fired = await fetch(`${cp.url}/api/notify/${trigger.id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message }),
      });
      const body = (await fired.json()) as { data: { integrations: number; event_id: string } };
      assert.equal(body.data.integrations, 8);
      eventId = body.data.event_id;
      got = byChannel(await s.sink.waitForRequests(7));
      await smtp.waitForMessages(1);
      const rows = await deliveryRows(cp, eventId);
      deliveryIds = new Map(rows.map((r) => [Object.entries(s.ids).find(([, id]) => id === r.integration_id)![0], r.id]));
    });

    it('posts the documented JSON body to a webhook, signed with its secret, keyed by the delivery id', () => {
      const [req] = got.webhook!;
      assert.equal(req!.method, 'POST');
      assert.equal(req!.headers['content-type'], 'application/json');
      assert.match(String(req!.headers['user-agent']), /^uptime-notify\//);
      const body = json(req!);
      assert.deepEqual(Object.keys(body).sort(), ['data', 'event', 'id', 'message', 'occurred_at', 'project', 'subject']);
      assert.equal(body.id, eventId);
      assert.equal(body.event, 'trigger.fired');
      assert.equal(body.message, message);
      assert.deepEqual(body.project, { id: projectId, name: 'Triggers' });
      assert.deepEqual(body.subject, { type: 'trigger', id: triggerId, name: 'Deploys' });
      assert.deepEqual(body.data, {});
      assert.equal(req!.headers['idempotency-key'], deliveryIds.get('webhook'));
      assert.equal(req!.headers['x-uptime-delivery'], deliveryIds.get('webhook'));
      assert.equal(req!.headers['x-uptime-event'], 'trigger.fired');
      const ts = String(req!.headers['x-uptime-timestamp']);
      assert.ok(Math.abs(Number(ts) - Date.now() / 1000) < 60);
      const expected = `sha256=${createHmac('sha256', webhookSecret).update(`${ts}.${req!.body}`).digest('hex')}`;
      assert.equal(req!.headers['x-uptime-signature'], expected);
    });

    it('sends Slack blocks with the trigger name as header and the message escaped', () => {
      const body = json(got.slack![0]!);
      assert.match(body.text, /Deploys/);
      assert.equal(body.blocks[0].type, 'header');
      assert.match(body.blocks[0].text.text, /Deploys/);
      assert.equal(body.blocks[1].text.text, 'Deploy of &lt;api&gt; finished &amp; healthy');
      assert.equal(body.blocks.at(-1).type, 'context');
    });

    it('sends a Discord embed without mentions', () => {
      const body = json(got.discord![0]!);
      assert.deepEqual(body.allowed_mentions, { parse: [] });
      assert.match(body.embeds[0].title, /Deploys/);
      assert.equal(body.embeds[0].description, message);
      assert.equal(body.embeds[0].color, 0x5865f2);
    });

    it('sends Teams an Adaptive Card', () => {
      const body = json(got.teams![0]!);
      assert.equal(body.type, 'message');
      assert.equal(body.attachments[0].contentType, 'application/vnd.microsoft.card.adaptive');
      const texts = body.attachments[0].content.body.map((b: { text?: string }) => b.text);
      assert.ok(texts.includes(message));
    });

    it("sends Telegram HTML text to the chat through the bot's sendMessage", () => {
      const req = got.telegram![0]!;
      assert.equal(req.url, `/telegram/bot${botToken}/sendMessage`);
      const body = json(req);
      assert.equal(body.chat_id, '-100123');
      assert.equal(body.parse_mode, 'HTML');
      assert.match(body.text, /^<b>.*Deploys<\/b>\n/);
      assert.ok(body.text.includes('Deploy of &lt;api&gt; finished &amp; healthy'));
    });

    it('opens a PagerDuty incident of its own', () => {
      const body = json(got.pagerduty![0]!);
      assert.equal(got.pagerduty![0]!.url, '/pagerduty/v2/enqueue');
      assert.equal(body.routing_key, routingKey);
      assert.equal(body.event_action, 'trigger');
      assert.equal(body.dedup_key, `uptime:event:${eventId}`);
      assert.equal(body.payload.summary, message);
      assert.equal(body.payload.severity, 'critical');
      assert.equal(body.payload.group, 'Triggers');
    });

    it('publishes to the ntfy topic with a title, default priority and the access token', () => {
      const req = got.ntfy![0]!;
      assert.equal(req.headers.authorization, 'Bearer tk_ntfytoken');
      const body = json(req);
      assert.equal(body.topic, 'ops');
      assert.equal(body.title, 'Deploys');
      assert.equal(body.message, message);
      assert.equal(body.priority, 3);
      assert.deepEqual(body.tags, ['bell']);
    });

    it('mails every recipient a subject, a text part and an HTML part', () => {
      const [mail] = mailsTo('Triggers');
      assert.ok(mail);
      assert.equal(mail.from, 'alerts@uptime.test');
      assert.deepEqual(mail.to, ['ops@example.com', 'dev@example.com']);
      assert.match(mail.headers.subject!, /Deploys/);
      assert.equal(mail.headers['message-id'], `<${deliveryIds.get('email')}@uptime.notify>`);
      assert.match(mail.raw, /Content-Type: text\/plain/i);
      assert.match(mail.raw, /Content-Type: text\/html/i);
      assert.ok(mail.text.includes(message));
      assert.ok(mail.text.includes('Deploy of &lt;api&gt; finished &amp; healthy'));
    });

    it("shows every delivery as delivered in the trigger's events", async () => {
      const list = await eventually(async () => {
        const res = await api('GET', `/triggers/${triggerId}/events`);
        const ds = res.body.data[0].deliveries as { status: string }[];
        return ds.length === 8 && ds.every((d) => d.status === 'delivered') && res.body;
      }, 'every delivery delivered');
      assert.equal(list.data[0].deliveries[0].attempts, 1);
    });
  });

  describe('a monitor going down and up', () => {
    const monitor = { type: 'monitor' as const, id: randomUUID(), name: 'Shop' };
    const incident = randomUUID();
    let down: Record<string, RecordedRequest[]>;
    let up: Record<string, RecordedRequest[]>;

    before(async () => {
      const s = await scenario('Shop team');
      const mails = smtp.messages.length;
      await recordAlert(
        cp,
        domainEvent(s.projectId, {
          kind: 'monitor.down',
          subject: monitor,
          data: {
            url: 'https://shop.example.com/',
            regions: ['eu-west', 'us-east'],
            cause: 'HTTP 503 (expected 200-299)',
            incident_id: incident,
            started_at: '2026-01-01T10:00:00.000Z',
          },
        }),
      );
      down = byChannel(await s.sink.waitForRequests(7));
      await smtp.waitForMessages(mails + 1);
      await recordAlert(
        cp,
        domainEvent(s.projectId, {
          kind: 'monitor.up',
          subject: monitor,
          data: { url: 'https://shop.example.com/', incident_id: incident, duration_seconds: 305 },
        }),
      );
      up = byChannel((await s.sink.waitForRequests(14)).slice(7));
      await smtp.waitForMessages(mails + 2);
    });

    it('says which monitor is down, why and where, then that it is up and for how long it was down', () => {
      const slackDown = json(down.slack![0]!);
      assert.equal(slackDown.blocks[0].text.text, '🔴 Monitor Shop is down');
      assert.equal(
        slackDown.blocks[1].text.text,
        'Monitor "Shop" is down: HTTP 503 (expected 200-299). Failing regions: eu-west, us-east.',
      );
      const fields = slackDown.blocks[2].fields.map((f: { text: string }) => f.text);
      assert.ok(fields.includes('*URL*\nhttps://shop.example.com/'));
      assert.ok(fields.includes('*Regions*\neu-west, us-east'));
      assert.ok(fields.includes('*Cause*\nHTTP 503 (expected 200-299)'));
      const slackUp = json(up.slack![0]!);
      assert.equal(slackUp.blocks[0].text.text, '✅ Monitor Shop is up');
      assert.equal(slackUp.blocks[1].text.text, 'Monitor "Shop" is up again after 5m 5s.');
    });

    it('colours the Discord embed by state and links the monitored URL', () => {
      const d = json(down.discord![0]!).embeds[0];
      const u = json(up.discord![0]!).embeds[0];
      assert.equal(d.color, 0xe01e5a);
      assert.equal(u.color, 0x2eb67d);
      assert.equal(d.url, 'https://shop.example.com/');
      assert.deepEqual(
        d.fields.find((f: { name: string }) => f.name === 'Regions'),
        { name: 'Regions', value: 'eu-west, us-east', inline: true },
      );
      assert.ok(u.fields.some((f: { name: string; value: string }) => f.name === 'Down for' && f.value === '5m 5s'));
    });

    it('lists the facts in the Teams card and the Telegram text', () => {
      const card = json(down.teams![0]!).attachments[0].content;
      const facts = card.body.find((b: { type: string }) => b.type === 'FactSet').facts;
      assert.deepEqual(
        facts.find((f: { title: string }) => f.title === 'Cause'),
        { title: 'Cause', value: 'HTTP 503 (expected 200-299)' },
      );
      // The open alert's buttons first (the worker adds its signed links), then the monitored address.
      assert.deepEqual(
        card.actions.map((a: { url: string }) => (a.url.includes('/app/alerts/') ? new URL(a.url).pathname.split('/').at(-1) : a.url)),
        ['acknowledge', 'snooze', card.actions[2].url, 'https://shop.example.com/'],
      );
      const text = json(down.telegram![0]!).text as string;
      assert.ok(text.startsWith('<b>🔴 Monitor Shop is down</b>'));
      assert.ok(text.includes('<b>Regions:</b> eu-west, us-east'));
    });

    it('opens a PagerDuty incident per monitor incident and resolves it with the same key', () => {
      const d = json(down.pagerduty![0]!);
      const u = json(up.pagerduty![0]!);
      assert.equal(d.event_action, 'trigger');
      assert.equal(d.dedup_key, `uptime:monitor:${monitor.id}:${incident}`);
      assert.equal(d.payload.source, 'https://shop.example.com/');
      assert.equal(d.payload.class, 'monitor.down');
      assert.deepEqual(u, { routing_key: routingKey, event_action: 'resolve', dedup_key: d.dedup_key });
    });

    it('sends ntfy an urgent, tagged notification when down and a default one when up', () => {
      const d = json(down.ntfy![0]!);
      const u = json(up.ntfy![0]!);
      assert.equal(d.priority, 5);
      assert.deepEqual(d.tags, ['rotating_light']);
      assert.equal(d.click, 'https://shop.example.com/');
      assert.equal(d.title, 'Monitor Shop is down');
      assert.equal(u.priority, 3);
      assert.deepEqual(u.tags, ['white_check_mark']);
    });

    it("hands a webhook the event's kind, subject and data as published", () => {
      const body = json(down.webhook![0]!);
      assert.equal(body.event, 'monitor.down');
      assert.deepEqual(body.subject, monitor);
      assert.equal(body.data.incident_id, incident);
      assert.deepEqual(body.data.regions, ['eu-west', 'us-east']);
      assert.equal(json(up.webhook![0]!).data.duration_seconds, 305);
    });

    it('mails a subject naming the state and the facts in both parts', () => {
      const [d, u] = mailsTo('Shop team');
      assert.equal(d!.headers.subject, '🔴 Monitor Shop is down');
      assert.ok(d!.text.includes('Regions: eu-west, us-east'));
      assert.ok(d!.text.includes('<th align="left" style="padding:2px 12px 2px 0">Cause</th>'));
      assert.equal(u!.headers.subject, '✅ Monitor Shop is up');
      assert.ok(u!.text.includes('Down for: 5m 5s'));
    });
  });

  describe('a heartbeat going down and up', () => {
    const heartbeat = { type: 'heartbeat' as const, id: randomUUID(), name: 'Nightly backup' };
    let down: Record<string, RecordedRequest[]>;
    let up: Record<string, RecordedRequest[]>;

    before(async () => {
      const s = await scenario('Backups');
      const mails = smtp.messages.length;
      await recordAlert(
        cp,
        domainEvent(s.projectId, {
          kind: 'heartbeat.down',
          subject: heartbeat,
          data: {
            reason: 'missed',
            status: 'down',
            last_ping_at: '2026-01-01T02:00:00.000Z',
            next_ping_at: '2026-01-02T02:00:00.000Z',
            down_since: '2026-01-02T03:00:00.000Z',
            grace_period: 3600,
          },
        }),
      );
      down = byChannel(await s.sink.waitForRequests(7));
      await smtp.waitForMessages(mails + 1);
      await recordAlert(
        cp,
        domainEvent(s.projectId, {
          kind: 'heartbeat.up',
          subject: heartbeat,
          data: { reason: 'ping', status: 'up', down_since: '2026-01-02T03:00:00.000Z', duration_seconds: 7260 },
        }),
      );
      up = byChannel((await s.sink.waitForRequests(14)).slice(7));
      await smtp.waitForMessages(mails + 2);
    });

    it('says the heartbeat missed its ping, then that it is back', () => {
      assert.equal(
        json(down.slack![0]!).blocks[1].text.text,
        'Heartbeat "Nightly backup" is down: no ping arrived within the grace period.',
      );
      assert.equal(json(up.slack![0]!).blocks[1].text.text, 'Heartbeat "Nightly backup" is up again after 2h 1m.');
      assert.ok((json(down.telegram![0]!).text as string).includes('<b>Last ping:</b> 2026-01-01T02:00:00.000Z'));
      assert.equal(json(down.discord![0]!).embeds[0].title, '🔴 Heartbeat Nightly backup is down');
      const [mail] = mailsTo('Backups');
      assert.equal(mail!.headers.subject, '🔴 Heartbeat Nightly backup is down');
    });

    it('keeps one PagerDuty incident per heartbeat, resolved by the up event', () => {
      const d = json(down.pagerduty![0]!);
      const u = json(up.pagerduty![0]!);
      assert.equal(d.dedup_key, `uptime:heartbeat:${heartbeat.id}`);
      assert.equal(d.event_action, 'trigger');
      assert.equal(u.event_action, 'resolve');
      assert.equal(u.dedup_key, d.dedup_key);
    });

    it("sends ntfy the heartbeat's state with its priority", () => {
      assert.equal(json(down.ntfy![0]!).priority, 5);
      assert.equal(json(up.ntfy![0]!).title, 'Heartbeat Nightly backup is up');
    });
  });
});
