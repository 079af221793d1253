import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startNotifyRole, type NotifyRole } from '../../control-plane/src/notifications/role.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startTarget, startWebhookSink, type RecordedRequest, type Target } from '../harness/http.ts';
import { eventually } from '../harness/streams.ts';
import { startSmtpSink, type SmtpSink } from '../notify/smtp.ts';
import { webClient, type WebClient } from '../web/client.ts';

/**
 * What happens to a status page subscriber's message when its receiver fails: retried with the
 * notifications' back-off under one delivery id, dead after NOTIFY_MAX_ATTEMPTS (or at once when
 * refused for good, or when the address policy forbids the receiver), its error shown on the
 * subscriber, and every other subscriber of the page told once all the same. Receivers are real
 * HTTP and SMTP servers on 127.0.0.1; the notify role runs with a short back-off.
 */
const MAX_ATTEMPTS = 3;

interface DeliveryRow {
  id: string;
  status: string;
  attempts: number;
  last_error: string | null;
}

interface Setup {
  cp: TestControlPlane;
  role: NotifyRole;
  ada: TestAccount;
  api: Call;
}

async function setUp(env: Record<string, string>): Promise<Setup> {
  const cp = await startTestControlPlane({ roles: ['api'], env: { NOTIFY_MAX_ATTEMPTS: String(MAX_ATTEMPTS), ...env } });
  const role = await startNotifyRole({
    sql: cp.db.sql,
    log: quietLog,
    config: cp.config,
    keys: cp.cp.keys,
    backoffBaseMs: 50,
    pollMs: 100,
  });
  const ada = await createAccount(cp.db.sql);
  return { cp, role, ada, api: apiClient(cp.url, ada.token) };
}

async function tearDown(s: Setup | undefined): Promise<void> {
  await s?.role.stop();
  await s?.cp.stop();
}

async function newPage(s: Setup, title: string): Promise<string> {
  const res = await s.api('POST', '/status-pages', { project_id: s.ada.project_id, title });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data.id;
}

async function addWebhook(s: Setup, pageId: string, url: string): Promise<string> {
  const res = await s.api('POST', `/status-pages/${pageId}/subscribers`, { type: 'webhook', url });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data.id;
}

async function publishIncident(s: Setup, pageId: string, title: string): Promise<void> {
  const res = await s.api('POST', `/status-pages/${pageId}/incidents`, {
    title,
    impact: 'major',
    status: 'investigating',
    message: 'Looking into it.',
    published: true,
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
}

/** Resolves once nothing is left to fan out, waiting or in flight. */
const settled = (s: Setup) =>
  eventually(
    async () => {
      const [row] = await s.cp.db.sql<{ n: number }[]>`
      select (select count(*) from subscriber_deliveries where status in ('pending', 'sending'))
        + (select count(*) from status_page_notices where fanned_out_at is null) as n`;
      return Number(row!.n) === 0;
    },
    'every subscriber message settled',
    30_000,
  );

const noticeDeliveries = (s: Setup, subscriberId: string) =>
  s.cp.db.sql<DeliveryRow[]>`
    select id, status, attempts, last_error from subscriber_deliveries
    where subscriber_id = ${subscriberId} and purpose = 'notice' order by created_at`;

async function subscriberView(s: Setup, pageId: string, id: string) {
  const res = await s.api('GET', `/status-pages/${pageId}/subscribers/${id}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data as { delivered: number; failed: number; last_error: string | null };
}

/** The subscriber's row on the dashboard's subscribers page. */
async function dashboardRow(web: WebClient, pageId: string, id: string): Promise<string> {
  const res = await web.get(`/app/status-pages/${pageId}/subscribers`);
  assert.equal(res.status, 200);
  const row = new RegExp(`<tr data-subscriber="${id}">[\\s\\S]*?</tr>`).exec(res.text);
  assert.ok(row, `the subscriber ${id} is listed`);
  return row[0];
}

const deliveryIdsOf = (requests: RecordedRequest[]) => requests.map((r) => r.headers['x-uptime-delivery']);

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('status page subscriber deliveries that fail', () => {
  let s: Setup;
  let smtp: SmtpSink;
  let web: WebClient;
  const targets: Target[] = [];

  before(async () => {
    smtp = await startSmtpSink();
    s = await setUp({ SMTP_URL: smtp.url, SMTP_FROM: 'status@acme.test' });
    web = webClient(s.cp.url);
    await web.signIn(s.ada.email, s.ada.password);
  });
  after(async () => {
    await tearDown(s);
    await Promise.all(targets.map((t) => t.close()));
    await smtp.close();
  });

  /** An email subscriber of the page, confirmed through the link of its confirmation email. */
  async function confirmedEmail(pageId: string, address: string): Promise<string> {
    const mailed = smtp.messages.length;
    const res = await s.api('POST', `/status-pages/${pageId}/subscribers`, { type: 'email', email: address });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const mail = (await smtp.waitForMessages(mailed + 1)).find((m) => m.to.includes(address))!;
    const link = /\/status\/subscriptions\/[0-9a-f-]{36}\/confirm\?sig=[A-Za-z0-9_-]{43}/.exec(mail.text);
    assert.ok(link, mail.text);
    assert.equal((await web.post(link[0], {})).status, 200);
    return res.body.data.id;
  }
  const mailsTo = (address: string) => smtp.messages.filter((m) => m.to.includes(address));

  it('retries a webhook that answers 500 and delivers it once, under one delivery id, when it answers 200', async () => {
    const flaky = await startTarget({ status: 500, body: 'upstream down' });
    targets.push(flaky);
    const pageId = await newPage(s, 'Flaky');
    const id = await addWebhook(s, pageId, `${flaky.url}/hook`);
    const retriedBefore = s.role.stats().subscribers.retried;

    await publishIncident(s, pageId, 'Checkout errors');
    // The second attempt is answered 500 as it arrives; the third, after a back-off, gets 200.
    await flaky.waitForRequests(2);
    flaky.respond({ status: 200, body: 'ok' });
    await flaky.waitForRequests(3);
    await settled(s);

    assert.equal(flaky.requests.length, 3, 'two failures, then one success, and nothing after it');
    const [delivery] = await noticeDeliveries(s, id);
    assert.deepEqual(deliveryIdsOf(flaky.requests), [delivery!.id, delivery!.id, delivery!.id], 'every attempt under the same id');
    assert.deepEqual(
      flaky.requests.map((r) => r.headers['idempotency-key']),
      [delivery!.id, delivery!.id, delivery!.id],
    );
    assert.equal(new Set(flaky.requests.map((r) => JSON.parse(r.body).id)).size, 1, 'the same notice every time');
    assert.equal(delivery!.status, 'delivered');
    assert.equal(delivery!.attempts, 3);
    assert.equal(s.role.stats().subscribers.retried - retriedBefore, 2);

    // Delivered, not failed; the error of the failed attempts stays to be read.
    const view = await subscriberView(s, pageId, id);
    assert.equal(view.delivered, 1);
    assert.equal(view.failed, 0);
    assert.match(view.last_error ?? '', /^HTTP 500 from 127\.0\.0\.1:\d+: upstream down$/);
    const row = await dashboardRow(web, pageId, id);
    assert.match(row, /Active/);
    assert.match(row, /Last error: HTTP 500 from/);
    assert.doesNotMatch(row, /failed/);
  });

  it('gives up after NOTIFY_MAX_ATTEMPTS on a receiver that always fails, and tells every other subscriber once', async () => {
    const broken = await startTarget({ status: 503, body: 'maintenance' });
    const healthy = await startWebhookSink();
    targets.push(broken, healthy);
    const pageId = await newPage(s, 'Mixed');
    const brokenId = await addWebhook(s, pageId, `${broken.url}/hook`);
    const closedId = await addWebhook(s, pageId, `http://127.0.0.1:${await closedPort()}/hook`);
    await addWebhook(s, pageId, `${healthy.url}/hook`);
    await confirmedEmail(pageId, 'reader@example.com');

    await publishIncident(s, pageId, 'Slow search');
    await settled(s);

    const [dead] = await noticeDeliveries(s, brokenId);
    assert.equal(dead!.status, 'dead');
    assert.equal(dead!.attempts, MAX_ATTEMPTS);
    assert.match(dead!.last_error!, /^HTTP 503 from 127\.0\.0\.1:\d+: maintenance$/);
    assert.equal(broken.requests.length, MAX_ATTEMPTS, 'each attempt sent once');
    assert.deepEqual(new Set(deliveryIdsOf(broken.requests)), new Set([dead!.id]));

    const [refused] = await noticeDeliveries(s, closedId);
    assert.equal(refused!.status, 'dead');
    assert.equal(refused!.attempts, MAX_ATTEMPTS);
    assert.match(refused!.last_error!, /ECONNREFUSED/);

    assert.equal(healthy.requests.length, 1, 'the healthy webhook is told once');
    assert.equal(JSON.parse(healthy.requests[0]!.body).incident.title, 'Slow search');
    assert.equal(mailsTo('reader@example.com').length, 2, 'its confirmation, then the notice once');

    for (const id of [brokenId, closedId]) {
      const view = await subscriberView(s, pageId, id);
      assert.equal(view.delivered, 0);
      assert.equal(view.failed, 1);
      assert.ok(view.last_error);
      const row = await dashboardRow(web, pageId, id);
      assert.match(row, /Failing/);
      assert.match(row, /0, 1 failed/);
    }

    // A dead delivery is never taken again: another notice's attempts come and end, and the
    // first one's count stays where it was.
    await publishIncident(s, pageId, 'Slow search again');
    await settled(s);
    assert.equal(broken.requests.filter((r) => r.headers['x-uptime-delivery'] === dead!.id).length, MAX_ATTEMPTS);
    assert.equal(broken.requests.length, 2 * MAX_ATTEMPTS);
    assert.equal(healthy.requests.length, 2);
    assert.equal((await subscriberView(s, pageId, brokenId)).failed, 2);
  });

  it('records a recipient the SMTP server refuses for good (5xx) as failed, without retrying it', async () => {
    const pageId = await newPage(s, 'Mail refused');
    const id = await confirmedEmail(pageId, 'gone@example.com');
    const other = await confirmedEmail(pageId, 'here@example.com');
    smtp.refuse('gone@example.com', 550);

    await publishIncident(s, pageId, 'Login errors');
    await settled(s);

    const [dead] = await noticeDeliveries(s, id);
    assert.equal(dead!.status, 'dead');
    assert.equal(dead!.attempts, 1, 'a 550 is not asked again');
    assert.match(dead!.last_error!, /^SMTP 550: .*Mailbox unavailable/);
    assert.deepEqual(
      smtp.refused.filter((r) => r.to === 'gone@example.com'),
      [{ to: 'gone@example.com', code: 550 }],
    );
    assert.equal(mailsTo('gone@example.com').length, 1, 'its confirmation only');
    assert.equal(mailsTo('here@example.com').length, 2, 'the other subscriber is told once');

    const view = await subscriberView(s, pageId, id);
    assert.deepEqual([view.delivered, view.failed], [1, 1], 'its confirmation delivered, the notice failed');
    assert.match(view.last_error!, /SMTP 550/);
    assert.equal((await subscriberView(s, pageId, other)).failed, 0);
  });

  it('retries a recipient the SMTP server refuses for now (4xx, greylisting) and delivers it once', async () => {
    const pageId = await newPage(s, 'Mail greylisted');
    const id = await confirmedEmail(pageId, 'later@example.com');
    smtp.refuse('later@example.com', 451, 2);

    await publishIncident(s, pageId, 'Search errors');
    await settled(s);

    const [delivery] = await noticeDeliveries(s, id);
    assert.equal(delivery!.status, 'delivered', delivery!.last_error ?? '');
    assert.equal(delivery!.attempts, 3);
    assert.equal(smtp.refused.filter((r) => r.to === 'later@example.com').length, 2);
    const notices = mailsTo('later@example.com').slice(1);
    assert.equal(notices.length, 1, 'delivered once');
    assert.equal(notices[0]!.headers['message-id'], `<${delivery!.id}@uptime.status>`);
    const view = await subscriberView(s, pageId, id);
    assert.deepEqual([view.delivered, view.failed], [2, 0]);
    assert.match(view.last_error!, /^SMTP 451: /);
  });
});

describe('status page webhook subscribers and BLOCK_PRIVATE_TARGETS', () => {
  let s: Setup;
  let sink: Target;
  const SECRET_PATH = 'subscriber-hook-secret-4c1d';

  before(async () => {
    sink = await startWebhookSink();
    s = await setUp({ BLOCK_PRIVATE_TARGETS: 'true' });
  });
  after(async () => {
    await tearDown(s);
    await sink.close();
  });

  it('takes an internal address when the subscriber is added, and refuses it at delivery: dead at once, nothing sent', async () => {
    const pageId = await newPage(s, 'Inside');
    const port = new URL(sink.url).port;
    const urls = [`${sink.url}/${SECRET_PATH}`, `http://[::1]:${port}/${SECRET_PATH}`, `http://169.254.169.254/${SECRET_PATH}`];
    // Held to the policy at each delivery, as webhook integrations are: the policy may change,
    // and a name's addresses with it.
    const ids = [];
    for (const url of urls) ids.push(await addWebhook(s, pageId, url));

    await publishIncident(s, pageId, 'Checkout errors');
    await settled(s);

    assert.equal(sink.requests.length, 0, 'nothing reaches the internal receiver');
    for (const id of ids) {
      const [d] = await noticeDeliveries(s, id);
      assert.equal(d!.status, 'dead');
      assert.equal(d!.attempts, 1, 'a refusal is not retried');
      assert.match(d!.last_error!, /is not allowed \(BLOCK_PRIVATE_TARGETS\)/);
      assert.ok(!d!.last_error!.includes(SECRET_PATH), d!.last_error!);
      const view = await subscriberView(s, pageId, id);
      assert.equal(view.failed, 1);
      assert.match(view.last_error!, /is not allowed \(BLOCK_PRIVATE_TARGETS\)/);
    }
  });
});
