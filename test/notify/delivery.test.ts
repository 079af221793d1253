import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { NotifyRole } from '../../control-plane/src/notifications/role.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startTarget, startWebhookSink, type Target } from '../harness/http.ts';
import { eventually } from '../harness/streams.ts';
import { deliveriesSettled, deliveryRows, startTestNotifyRole } from './helpers.ts';

const BACKOFF_MS = 100;

describe('delivery', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let role: NotifyRole | undefined;
  let targets: Target[] = [];

  const startRole = async () => {
    role = await startTestNotifyRole(cp, { backoffBaseMs: BACKOFF_MS, pollMs: 100 });
    return role;
  };
  const stopRole = async () => {
    await role?.stop();
    role = undefined;
  };
  const target = async (status = 200) => {
    const t = await startTarget({ status, body: '{}' });
    targets.push(t);
    return t;
  };
  /** A trigger sending to a webhook per URL; fires it once and returns the event id. */
  const fire = async (urls: string[]) => {
    const ids = [];
    for (const url of urls)
      ids.push(
        (await api('POST', '/integrations', { project_id: ada.project_id, name: 'hook', type: 'webhook', config: { url } })).body.data.id,
      );
    const trigger = (
      await api('POST', '/triggers', { project_id: ada.project_id, name: 'Jobs', default_message: 'done', integration_ids: ids })
    ).body.data;
    const res = await fetch(`${cp.url}/api/notify/${trigger.id}`, { method: 'POST' });
    return ((await res.json()) as { data: { event_id: string } }).data.event_id;
  };
  const settled = (eventId: string, count = 1) =>
    eventually(async () => {
      const rows = await deliveryRows(cp, eventId);
      return rows.length === count && rows.every((r) => r.status === 'delivered' || r.status === 'dead') && rows;
    }, 'deliveries settled');

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'], env: { NOTIFY_MAX_ATTEMPTS: '3' } });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
  });
  beforeEach(async () => {
    await startRole();
  });
  afterEach(async () => {
    await stopRole();
    for (const t of targets) await t.close();
    targets = [];
  });
  after(() => cp.stop());

  it('retries after 500s with a doubling back-off and delivers, with the same delivery id each time', async () => {
    const t = await target(500);
    const eventId = await fire([`${t.url}/flaky`]);
    await t.waitForRequests(2);
    t.respond({ status: 200, body: '{}' });
    const reqs = await t.waitForRequests(3);
    const [row] = await settled(eventId);
    assert.equal(row!.status, 'delivered');
    assert.equal(row!.attempts, 3);
    assert.match(row!.last_error!, /^HTTP 500 from 127\.0\.0\.1:\d+/);
    assert.deepEqual(new Set(reqs.map((r) => r.headers['idempotency-key'])), new Set([row!.id]));
    const [a, b, c] = reqs.map((r) => r.at);
    assert.ok(b! - a! >= BACKOFF_MS * 0.9, `first retry after ${b! - a!} ms`);
    assert.ok(c! - b! >= 2 * BACKOFF_MS * 0.9, `second retry after ${c! - b!} ms`);
    await deliveriesSettled(cp);
    assert.equal(t.requests.length, 3);
  });

  it('dead-letters a delivery with its last error after NOTIFY_MAX_ATTEMPTS, and sends no more', async () => {
    const t = await target(503);
    const eventId = await fire([t.url]);
    await t.waitForRequests(3);
    const [row] = await settled(eventId);
    assert.equal(row!.status, 'dead');
    assert.equal(row!.attempts, 3);
    assert.match(row!.last_error!, /^HTTP 503 from /);
    await deliveriesSettled(cp);
    assert.equal(t.requests.length, 3);
    const log = await api('GET', `/integrations/${row!.integration_id}/deliveries`);
    assert.equal(log.body.data[0].status, 'dead');
    assert.equal(log.body.data[0].next_attempt_at, null);
  });

  it('gives up at once when the receiver refuses the message (a 4xx other than 408 and 429)', async () => {
    const t = await target(410);
    const eventId = await fire([t.url]);
    const [row] = await settled(eventId);
    assert.equal(row!.status, 'dead');
    assert.equal(row!.attempts, 1);
    assert.match(row!.last_error!, /HTTP 410/);
    await deliveriesSettled(cp);
    assert.equal(t.requests.length, 1);
  });

  it('retries a 429 and a 408 like a server error', async () => {
    const t = await target(429);
    const u = await target(408);
    const eventId = await fire([t.url, u.url]);
    await t.waitForRequests(1);
    await u.waitForRequests(1);
    t.respond({ status: 200 });
    u.respond({ status: 204 });
    const rows = await settled(eventId, 2);
    assert.deepEqual(
      rows.map((r) => [r.status, r.attempts]),
      [
        ['delivered', 2],
        ['delivered', 2],
      ],
    );
  });

  it('sends each delivery once with two notify processes taking from the same table', async () => {
    const t = await target();
    t.respond({ status: 200, delayMs: 20 });
    // Two sends at a time each: both processes keep coming back to the table while the other takes from it.
    await stopRole();
    role = await startTestNotifyRole(cp, { backoffBaseMs: BACKOFF_MS, pollMs: 100, concurrency: 2 });
    const second = await startTestNotifyRole(cp, { backoffBaseMs: BACKOFF_MS, pollMs: 100, concurrency: 2 });
    try {
      const urls = Array.from({ length: 20 }, (_, i) => `${t.url}/${i}`);
      const eventId = await fire(urls);
      await settled(eventId, 20);
      await deliveriesSettled(cp);
      const keys = t.requests.map((r) => String(r.headers['idempotency-key']));
      assert.equal(keys.length, 20);
      assert.equal(new Set(keys).size, 20);
      assert.equal(role!.stats().delivered + second.stats().delivered, 20);
      assert.deepEqual(
        (await deliveryRows(cp, eventId)).map((r) => r.attempts),
        Array(20).fill(1),
      );
    } finally {
      await second.stop();
    }
  });

  it('sends each delivery once when the role is stopped mid-delivery and started again', async () => {
    const t = await target();
    t.respond({ status: 200, delayMs: 400 });
    const eventId = await fire([`${t.url}/a`, `${t.url}/b`, `${t.url}/c`]);
    await t.waitForRequests(1);
    await stopRole();
    const whileStopped = await fire([`${t.url}/d`]);
    await startRole();
    await settled(eventId, 3);
    await settled(whileStopped, 1);
    await deliveriesSettled(cp);
    const keys = t.requests.map((r) => String(r.headers['idempotency-key']));
    assert.equal(keys.length, 4);
    assert.equal(new Set(keys).size, 4);
    const rows = [...(await deliveryRows(cp, eventId)), ...(await deliveryRows(cp, whileStopped))];
    assert.deepEqual(
      rows.map((r) => r.attempts),
      [1, 1, 1, 1],
    );
  });

  it('takes over a delivery whose worker died holding its claim, once the claim runs out, with the same delivery id', async () => {
    const t = await target();
    await stopRole();
    const eventId = await fire([t.url]);
    const [row] = await deliveryRows(cp, eventId);
    await cp.db
      .sql`update deliveries set status = 'sending', attempts = 1, claimed_until = now() + interval '300 milliseconds' where id = ${row!.id}`;
    await startRole();
    const [req] = await t.waitForRequests(1);
    assert.equal(req!.headers['idempotency-key'], row!.id);
    const [done] = await settled(eventId);
    assert.equal(done!.status, 'delivered');
    assert.equal(done!.attempts, 2);
  });

  it('sends a delivery committed while no worker ran', async () => {
    const t = await target();
    const eventId = await fire([t.url]);
    const [sent] = await settled(eventId);
    await stopRole();
    const [copy] = await cp.db.sql<{ id: string }[]>`
      insert into deliveries (event_id, integration_id, project_id, trigger_id, kind, payload)
      select gen_random_uuid(), integration_id, project_id, trigger_id, kind, payload from deliveries where id = ${sent!.id}
      returning id`;
    await startRole();
    const reqs = await t.waitForRequests(2);
    assert.equal(reqs[1]!.headers['idempotency-key'], copy!.id);
    await eventually(
      async () => (await cp.db.sql`select 1 from deliveries where id = ${copy!.id} and status = 'delivered'`).length === 1,
      'the delivery made while no worker ran',
    );
  });

  it('sends a delivery whose wake-up never came, on its next look at the table', async () => {
    const t = await target();
    const eventId = await fire([t.url]);
    const [sent] = await settled(eventId);
    // Inserted with triggers off: no pg_notify, as if the notification was lost with a connection.
    const [copy] = await cp.db.sql.begin(async (tx) => {
      await tx`set local session_replication_role = replica`;
      return tx<{ id: string }[]>`
        insert into deliveries (event_id, integration_id, project_id, trigger_id, kind, payload)
        select gen_random_uuid(), integration_id, project_id, trigger_id, kind, payload from deliveries where id = ${sent!.id}
        returning id`;
    });
    const reqs = await t.waitForRequests(2);
    assert.equal(reqs[1]!.headers['idempotency-key'], copy!.id);
    const [done] = await cp.db.sql<{ status: string; attempts: number }[]>`select status, attempts from deliveries where id = ${copy!.id}`;
    assert.equal(done!.attempts, 1);
  });

  it('stops delivering to an integration paused after the event', async () => {
    const t = await target(500);
    const eventId = await fire([t.url]);
    await t.waitForRequests(1);
    const [row] = await deliveryRows(cp, eventId);
    await api('PATCH', `/integrations/${row!.integration_id}`, { active: false });
    const [done] = await settled(eventId);
    assert.equal(done!.status, 'dead');
    assert.match(done!.last_error!, /paused/);
  });
});

describe('private targets', () => {
  let cp: TestControlPlane;
  let api: Call;
  let ada: TestAccount;
  let sink: Target;
  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'], env: { BLOCK_PRIVATE_TARGETS: 'true' } });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    sink = await startWebhookSink();
  });
  after(async () => {
    await sink.close();
    await cp.stop();
  });

  it('refuses loopback addresses, by literal or by name, when BLOCK_PRIVATE_TARGETS is on', async () => {
    const port = new URL(sink.url).port;
    for (const url of [`http://127.0.0.1:${port}/hook`, `http://localhost:${port}/hook`, `http://[::1]:${port}/hook`]) {
      const id = (await api('POST', '/integrations', { project_id: ada.project_id, name: 'local', type: 'webhook', config: { url } })).body
        .data.id;
      const res = await api('POST', `/integrations/${id}/test`);
      assert.equal(res.body.data.delivered, false, url);
      assert.equal(res.body.data.retryable, false, url);
      assert.match(res.body.data.error, /not allowed/, url);
    }
    assert.equal(sink.requests.length, 0);
  });
});
