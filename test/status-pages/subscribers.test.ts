import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { jetstream } from '@nats-io/jetstream';
import type { DomainEvent } from '../../shared/src/contracts/events.ts';
import { signWebhook } from '../../control-plane/src/notifications/channels/webhook.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startWebhookSink, type Target } from '../harness/http.ts';
import { eventually } from '../harness/streams.ts';
import { startSmtpSink, type ReceivedMail, type SmtpSink } from '../notify/smtp.ts';
import { webClient, type WebClient } from '../web/client.ts';

/**
 * Status page subscribers end to end: a visitor subscribes through the page's form and confirms
 * from the email (a real SMTP server on loopback), a webhook is added through the API (a local
 * receiver), and each published incident update and maintenance start reaches every confirmed
 * subscriber once, through the notify role's queue in a real Postgres.
 */
describe('status page subscribers', () => {
  let cp: TestControlPlane;
  let smtp: SmtpSink;
  let hook: Target;
  let ada: TestAccount;
  let api: Call;
  let web: WebClient;
  let pageId: string;
  let slug: string;
  let shop: string;
  let other: string;
  const secret = 'a-signing-secret-of-some-length';

  const linkIn = (mail: ReceivedMail, purpose: 'confirm' | 'unsubscribe') => {
    const m = new RegExp(
      `${cp.config.PUBLIC_URL.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(/status/subscriptions/[0-9a-f-]{36}/${purpose}\\?sig=[A-Za-z0-9_-]{43})`,
    ).exec(mail.text);
    assert.ok(m, `a ${purpose} link in:\n${mail.text}`);
    return m[1]!;
  };
  const mailsTo = (address: string) => smtp.messages.filter((m) => m.to.some((to) => to.toLowerCase() === address.toLowerCase()));
  /** Resolves once the notify role has no subscriber message pending or in flight. */
  const settled = () =>
    eventually(async () => {
      const [row] = await cp.db.sql<{ n: number }[]>`
        select (select count(*) from subscriber_deliveries where status in ('pending', 'sending'))
          + (select count(*) from status_page_notices where fanned_out_at is null) as n`;
      return Number(row!.n) === 0;
    }, 'every subscriber message sent');
  const subscribe = async (email: string) => {
    const res = await web.post(`/status/${slug}/subscribe`, { email });
    assert.equal(res.status, 200, res.text);
    assert.match(res.text, /Check your inbox/);
  };

  before(async () => {
    smtp = await startSmtpSink();
    hook = await startWebhookSink();
    cp = await startTestControlPlane({ roles: ['api', 'notify'], env: { SMTP_URL: smtp.url, SMTP_FROM: 'status@acme.test' } });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    web = webClient(cp.url);
    shop = (await api('POST', '/monitors', { name: 'shop-prod', url: 'https://shop.example', project_id: ada.project_id })).body.data.id;
    other = (await api('POST', '/monitors', { name: 'internal', url: 'https://internal.example', project_id: ada.project_id })).body.data
      .id;
    const page = await api('POST', '/status-pages', {
      project_id: ada.project_id,
      title: 'Acme status',
      groups: [{ name: 'Shop', components: [{ type: 'monitor', id: shop, display_name: 'Web shop' }] }],
    });
    assert.equal(page.status, 201, JSON.stringify(page.body));
    pageId = page.body.data.id;
    slug = page.body.data.slug;
  });
  after(async () => {
    await cp.stop();
    await smtp.close();
    await hook.close();
  });

  it('shows a subscribe form below the live part of the page', async () => {
    const res = await web.get(`/status/${slug}`);
    assert.equal(res.status, 200);
    assert.match(res.text, new RegExp(`<form method="post" action="/status/${slug}/subscribe"`));
    const main = res.text.slice(res.text.indexOf('<main'), res.text.indexOf('</main>'));
    assert.doesNotMatch(main, /subscribe-email/, 'a refresh of the live part never empties what is typed');
  });

  it('subscribes a visitor by email only once they confirm from the email, with a POST (a scanner’s GET confirms nothing)', async () => {
    await subscribe('Grace@Example.com');
    const [mail] = await smtp.waitForMessages(1);
    assert.equal(mail!.headers.to?.toLowerCase(), 'grace@example.com');
    assert.equal(mail!.headers.subject, 'Confirm your subscription to Acme status');
    assert.equal(mail!.headers['list-unsubscribe'], undefined, 'a confirmation is not a list message');
    const link = linkIn(mail!, 'confirm');

    const shown = await web.get(link);
    assert.equal(shown.status, 200);
    assert.match(shown.text, /Confirm the subscription/);
    let [row] = await cp.db.sql<
      { confirmed_at: Date | null }[]
    >`select confirmed_at from status_page_subscribers where email = 'Grace@Example.com'`;
    assert.equal(row!.confirmed_at, null, 'a GET changes nothing');

    const confirmed = await web.post(link, {});
    assert.equal(confirmed.status, 200);
    assert.match(confirmed.text, /You are subscribed to Acme status/);
    [row] = await cp.db.sql<
      { confirmed_at: Date | null }[]
    >`select confirmed_at from status_page_subscribers where email = 'Grace@Example.com'`;
    assert.ok(row!.confirmed_at);

    // Asking again (any case) sends nothing and answers the same: the address's state is not told.
    await subscribe('grace@example.com');
    await settled();
    assert.equal(smtp.messages.length, 1);
  });

  it('refuses bad links and bad addresses without saying anything about subscribers', async () => {
    const id = randomUUID();
    assert.equal((await web.get(`/status/subscriptions/${id}/confirm?sig=${'A'.repeat(43)}`)).status, 404);
    assert.equal((await web.post(`/status/subscriptions/${id}/unsubscribe?sig=nope`, {})).status, 404);
    const bad = await web.post(`/status/${slug}/subscribe`, { email: 'grace@example.com, eve@example.com' });
    assert.equal(bad.status, 422);
    assert.match(bad.text, /The email field must be one email address/);
    assert.equal((await web.post(`/status/${'x'.repeat(22)}/subscribe`, { email: 'a@example.com' })).status, 404);
  });

  it('adds a webhook through the API, never returning its URL or secret; validates and names fields', async () => {
    const res = await api('POST', `/status-pages/${pageId}/subscribers`, { type: 'webhook', url: `${hook.url}/status-hook`, secret });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.message, 'Subscriber added successfully');
    const s = res.body.data;
    assert.equal(s.type, 'webhook');
    assert.equal(s.confirmed, true);
    assert.equal(s.webhook_host, new URL(hook.url).host);
    assert.equal(s.webhook_secret_set, true);
    assert.doesNotMatch(JSON.stringify(res.body), /status-hook|a-signing-secret/);

    const rows: [Record<string, unknown>, string][] = [
      [{ type: 'email', email: 'not an address' }, 'email'],
      [{ type: 'webhook', url: 'ftp://example.com/x' }, 'url'],
      [{ type: 'webhook', url: 'https://example.com/x', secret: 'short' }, 'secret'],
      [{ type: 'pigeon' }, 'type'],
    ];
    for (const [body, field] of rows) {
      const bad = await api('POST', `/status-pages/${pageId}/subscribers`, body);
      assert.equal(bad.status, 422, JSON.stringify(body));
      assert.ok(
        Object.keys(bad.body.errors).some((k) => k.startsWith(field)),
        `${field} named: ${JSON.stringify(bad.body)}`,
      );
    }
    const again = await api('POST', `/status-pages/${pageId}/subscribers`, { type: 'email', email: 'GRACE@example.com' });
    assert.equal(again.status, 409);
    assert.ok(again.body.errors.email);

    const list = await api('GET', `/status-pages/${pageId}/subscribers?type=webhook`);
    assert.equal(list.status, 200);
    assert.equal(list.body.meta.total, 1);
    const stranger = apiClient(cp.url, (await createAccount(cp.db.sql)).token);
    assert.equal((await stranger('GET', `/status-pages/${pageId}/subscribers`)).status, 404);
    assert.equal((await stranger('POST', `/status-pages/${pageId}/subscribers`, { type: 'webhook', url: hook.url })).status, 404);
  });

  it('tells every confirmed subscriber of each published update once; drafts and the unconfirmed hear nothing', async () => {
    // Waiting for confirmation: hears nothing.
    await subscribe('pending@example.com');
    await smtp.waitForMessages(2);
    const draft = await api('POST', `/status-pages/${pageId}/incidents`, {
      title: 'Checkout errors',
      impact: 'major',
      status: 'investigating',
      message: 'Looking into it.',
      components: [{ type: 'monitor', id: shop }],
    });
    assert.equal(draft.status, 201);
    const incident = draft.body.data.id;
    await api('POST', `/status-pages/${pageId}/incidents/${incident}/updates`, { status: 'identified', message: 'A bad *deploy*.' });
    await settled();
    assert.equal(mailsTo('Grace@Example.com').length, 1, 'a draft is told to no one');
    assert.equal(hook.requests.length, 0);

    // Published with two updates: one message, the incident as it stands.
    assert.equal((await api('PATCH', `/status-pages/${pageId}/incidents/${incident}`, { published: true })).status, 200);
    await settled();
    const [published] = mailsTo('Grace@Example.com').slice(1);
    assert.ok(published);
    assert.equal(published.headers.subject, '[Acme status] Identified: Checkout errors');
    assert.match(published.text, /Affects: Web shop/);
    assert.match(published.text, /A bad \*deploy\*\./);
    assert.match(published.text, new RegExp(`/status/${slug}/incidents/${incident}`));
    const unsubscribe = linkIn(published, 'unsubscribe');
    assert.equal(published.headers['list-unsubscribe'], `<${cp.config.PUBLIC_URL}${unsubscribe}>`);
    assert.equal(published.headers['list-unsubscribe-post'], 'List-Unsubscribe=One-Click');
    assert.equal(mailsTo('pending@example.com').length, 1, 'only its confirmation');

    const [request] = await hook.waitForRequests(1);
    assert.equal(request!.url, '/status-hook');
    assert.equal(request!.headers['x-uptime-event'], 'incident.published');
    assert.equal(
      request!.headers['x-uptime-signature'],
      signWebhook(secret, String(request!.headers['x-uptime-timestamp']), request!.body),
      'signed with the subscriber’s secret',
    );
    const body = JSON.parse(request!.body);
    assert.equal(body.event, 'incident.published');
    assert.deepEqual(body.page, { title: 'Acme status', url: `${cp.config.PUBLIC_URL}/status/${slug}` });
    assert.equal(body.incident.id, incident);
    assert.equal(body.incident.status, 'identified');
    assert.equal(body.incident.impact, 'major');
    assert.deepEqual(body.incident.components, ['Web shop']);
    assert.equal(body.incident.update.message, 'A bad *deploy*.');
    assert.doesNotMatch(request!.body, /shop\.example/, 'no monitor URL');

    // Each later update: one more message each.
    await api('POST', `/status-pages/${pageId}/incidents/${incident}/updates`, { status: 'resolved', message: 'Rolled back.' });
    await settled();
    assert.equal(mailsTo('Grace@Example.com').length, 3);
    assert.equal(hook.requests.length, 2);
    assert.equal(hook.requests[1]!.headers['x-uptime-event'], 'incident.updated');
    assert.notEqual(hook.requests[1]!.headers['idempotency-key'], hook.requests[0]!.headers['idempotency-key']);
    // An edit that publishes nothing new tells no one.
    await api('PATCH', `/status-pages/${pageId}/incidents/${incident}`, { title: 'Checkout errors (resolved)' });
    await settled();
    assert.equal(mailsTo('Grace@Example.com').length, 3);
    assert.equal(hook.requests.length, 2);

    const [grace] = (await api('GET', `/status-pages/${pageId}/subscribers?type=email&confirmed=true`)).body.data;
    assert.equal(grace.email, 'Grace@Example.com');
    assert.equal(grace.delivered, 3, 'its confirmation and two notices');
  });

  it('tells of a maintenance window starting on a page that shows what it covers, once per occurrence', async () => {
    const before = hook.requests.length;
    // Now, not a fixed date: a subscriber is told only of what happened after it confirmed.
    const startedAt = new Date();
    const event = (subjectIds: string[]) =>
      ({
        id: randomUUID(),
        kind: 'maintenance.started',
        occurred_at: startedAt.toISOString(),
        project_id: ada.project_id,
        subject: { type: 'maintenance_window', id: randomUUID(), name: 'Database upgrade' },
        data: {
          starts_at: startedAt.toISOString(),
          ends_at: new Date(startedAt.getTime() + 3_600_000).toISOString(),
          whole_project: false,
          monitor_ids: subjectIds,
          heartbeat_ids: [],
        },
      }) satisfies DomainEvent;
    const shown = event([shop]);
    const notShown = event([other]);
    const js = jetstream(cp.nats.nc);
    for (const [e, msgId] of [
      [notShown, notShown.id],
      [shown, shown.id],
      [shown, `${shown.id}-replayed`],
    ] as const)
      await js.publish(cp.nats.names.subjects.event(e.project_id, e.kind), JSON.stringify(e), { msgID: msgId });
    await hook.waitForRequests(before + 1);
    await eventually(async () => {
      const [row] = await cp.db.sql<{ n: number }[]>`select count(*)::int as n from status_page_notices where kind = 'maintenance'`;
      return row!.n >= 1;
    }, 'the maintenance notice');
    await settled();
    const maintenance = hook.requests.slice(before);
    assert.equal(maintenance.length, 1, 'once, and only for what the page shows');
    const body = JSON.parse(maintenance[0]!.body);
    assert.equal(body.event, 'maintenance.started');
    assert.deepEqual(body.maintenance.components, ['Web shop']);
    await eventually(async () => mailsTo('Grace@Example.com').length === 4, 'the maintenance email');
    assert.equal(mailsTo('Grace@Example.com')[3]!.headers.subject, '[Acme status] Maintenance started: Database upgrade');
  });

  it('tells of a one-off window scheduled ahead once, and again only when it moves', async () => {
    const before = hook.requests.length;
    const graceBefore = mailsTo('Grace@Example.com').length;
    const starts = Date.now() + 86_400_000;
    const created = await api('POST', '/maintenance-windows', {
      project_id: ada.project_id,
      name: 'Payment provider switch',
      description: 'Checkout may be slow.',
      starts_at: new Date(starts).toISOString(),
      ends_at: new Date(starts + 3_600_000).toISOString(),
      monitor_ids: [shop],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    // Not shown on the page: nothing.
    await api('POST', '/maintenance-windows', {
      project_id: ada.project_id,
      name: 'Internal only',
      starts_at: new Date(starts).toISOString(),
      ends_at: new Date(starts + 3_600_000).toISOString(),
      monitor_ids: [other],
    });
    await hook.waitForRequests(before + 1);
    await settled();
    const id = created.body.data.id;
    assert.equal((await api('PATCH', `/maintenance-windows/${id}`, { description: 'Checkout may be slow for a minute.' })).status, 200);
    await settled();
    assert.equal(hook.requests.length, before + 1, 'one notice; an edit keeping the times tells nothing');
    const body = JSON.parse(hook.requests[before]!.body);
    assert.equal(body.event, 'maintenance.scheduled');
    assert.equal(body.maintenance.name, 'Payment provider switch');
    assert.equal(body.maintenance.starts_at, new Date(starts).toISOString());
    assert.equal(mailsTo('Grace@Example.com').length, graceBefore + 1);
    assert.equal(mailsTo('Grace@Example.com').at(-1)!.headers.subject, '[Acme status] Maintenance scheduled: Payment provider switch');
    const moved = await api('PATCH', `/maintenance-windows/${id}`, {
      starts_at: new Date(starts + 7_200_000).toISOString(),
      ends_at: new Date(starts + 10_800_000).toISOString(),
    });
    assert.equal(moved.status, 200);
    await hook.waitForRequests(before + 2);
    await settled();
    assert.equal(JSON.parse(hook.requests[before + 1]!.body).maintenance.starts_at, new Date(starts + 7_200_000).toISOString());
    assert.equal(mailsTo('Grace@Example.com').length, graceBefore + 2, 'moving the window tells every subscriber again');
  });

  it('unsubscribes in one click (RFC 8058) without a page or cookie; nothing more is sent to it', async () => {
    const last = mailsTo('Grace@Example.com').at(-1)!;
    const mailed = mailsTo('Grace@Example.com').length;
    const link = linkIn(last, 'unsubscribe');
    const res = await fetch(`${cp.url}${link}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    assert.equal(res.status, 200);
    const again = await fetch(`${cp.url}${link}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    assert.equal(again.status, 200, 'a second click is not an error');
    const incident = await api('POST', `/status-pages/${pageId}/incidents`, {
      title: 'Slow search',
      impact: 'minor',
      status: 'investigating',
      message: 'Slower than usual.',
      published: true,
    });
    assert.equal(incident.status, 201);
    const hooks = hook.requests.length;
    await hook.waitForRequests(hooks + 1);
    await settled();
    assert.equal(mailsTo('Grace@Example.com').length, mailed, 'nothing after unsubscribing');
  });

  it('removes a subscriber through the API', async () => {
    const [s] = (await api('GET', `/status-pages/${pageId}/subscribers?type=webhook`)).body.data;
    assert.equal((await api('DELETE', `/status-pages/${pageId}/subscribers/${s.id}`)).status, 204);
    assert.equal((await api('GET', `/status-pages/${pageId}/subscribers/${s.id}`)).status, 404);
  });
});
