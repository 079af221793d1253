import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startDomainExpiry } from '../../control-plane/src/monitors/domain-expiry/job.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startWebhookSink, type Target } from '../harness/http.ts';
import { manualClock, type ManualClock } from '../heartbeats/manual-clock.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;

/**
 * Domain expiry through the real control plane (api, ingest, notify) and Postgres, against an
 * RDAP service and bootstrap file on 127.0.0.1; the clock is moved by hand, a pass is run at will.
 */
describe('domain expiry lookups and warnings', () => {
  let server: http.Server;
  let base = '';
  let cp: TestControlPlane;
  let clock: ManualClock;
  let ada: TestAccount;
  let api: Call;
  let sink: Target;
  const asked: string[] = [];
  /** What the registry answers for expiring.rdaptest: its expiration date. */
  let expiration = '';
  let registryDown = false;

  function handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/bootstrap.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ version: '1.0', services: [[['rdaptest'], [`${base}/rdap/`]]] }));
    }
    asked.push(path);
    if (path === '/rdap/domain/expiring.rdaptest') {
      res.writeHead(200, { 'content-type': 'application/rdap+json' });
      return void res.end(
        JSON.stringify({
          objectClassName: 'domain',
          ldhName: 'expiring.rdaptest',
          events: [{ eventAction: 'expiration', eventDate: expiration }],
          entities: [{ objectClassName: 'entity', roles: ['registrar'], vcardArray: ['vcard', [['fn', {}, 'text', 'Test Registrar']]] }],
        }),
      );
    }
    if (path === '/rdap/domain/flaky.rdaptest' && registryDown) {
      res.writeHead(503);
      return void res.end();
    }
    if (path === '/rdap/domain/flaky.rdaptest') {
      res.writeHead(200, { 'content-type': 'application/rdap+json' });
      return void res.end(JSON.stringify({ events: [{ eventAction: 'expiration', eventDate: '2099-01-01T00:00:00Z' }] }));
    }
    res.writeHead(404, { 'content-type': 'application/rdap+json' });
    res.end(JSON.stringify({ errorCode: 404 }));
  }

  const lookups = (domain: string) => asked.filter((p) => p === `/rdap/domain/${domain}`).length;
  const inDays = (days: number) => new Date(clock.now() + days * DAY).toISOString();
  const pass = () => cp.cp.domainExpiry!.runNow();
  const monitor = async (name: string, url: string, extra: Record<string, unknown> = {}) =>
    (await api('POST', '/monitors', { name, url, project_id: ada.project_id, ...extra })).body.data.id as string;
  /** The domain warnings recorded for a monitor, as [threshold, expires_at]. */
  const warnings = async (monitorId: string) =>
    (
      await cp.db.sql<{ threshold: number; expires_at: string }[]>`
        select (payload->'data'->>'threshold_days')::int as threshold, payload->'data'->'domain'->>'expires_at' as expires_at
        from outbox_events where kind = 'monitor.domain_expiring' and payload->'subject'->>'id' = ${monitorId} order by created_at`
    ).map((r) => [r.threshold, r.expires_at]);
  /** A domain's row, instants as epoch milliseconds. */
  const row = async (domain: string) =>
    (
      await cp.db.sql<{ ok: boolean; error: string | null; next_lookup_at: number; expires_at: number | null; registrar: string | null }[]>`
        select ok, error, registrar, (extract(epoch from next_lookup_at) * 1000)::float8 as next_lookup_at,
          (extract(epoch from expires_at) * 1000)::float8 as expires_at
        from domain_expiry where domain = ${domain}`
    )[0];

  before(async () => {
    server = http.createServer(handle);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    clock = manualClock(Date.parse('2030-06-01T09:00:00.000Z'));
    cp = await startTestControlPlane({
      roles: ['api', 'ingest', 'notify'],
      env: { RDAP_BOOTSTRAP_URL: `${base}/bootstrap.json` },
      clock,
    });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    sink = await startWebhookSink();
    await api('POST', '/integrations', { project_id: ada.project_id, name: 'ops', type: 'webhook', config: { url: sink.url } });
  });
  after(async () => {
    await sink.close();
    await cp.stop();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('looks a shared domain up once, warns each monitor at 14 days (not 30) once, and again only after a renewal', async () => {
    expiration = inDays(10);
    const shop = await monitor('Shop', 'https://shop.expiring.rdaptest/');
    const api2 = await monitor('API', 'tcp://api.expiring.rdaptest:443', { type: 'tcp' });
    const quiet = await monitor('Quiet', 'https://www.expiring.rdaptest/', { domain_expiry_days: [] });

    await pass();
    assert.equal(lookups('expiring.rdaptest'), 1, 'three monitors, one lookup');
    assert.deepEqual(await warnings(shop), [[14, expiration]]);
    assert.deepEqual(await warnings(api2), [[14, expiration]]);
    assert.deepEqual(await warnings(quiet), []);
    const shown = (await api('GET', `/monitors/${shop}`)).body.data.domain;
    assert.deepEqual(shown, {
      name: 'expiring.rdaptest',
      expires_at: expiration.replace('.000Z', '.000000Z'),
      registrar: 'Test Registrar',
      checked_at: new Date(clock.now()).toISOString().replace('Z', '000Z'),
      error: null,
    });
    const [delivered] = await sink.waitForRequests(1);
    const body = JSON.parse(delivered!.body);
    assert.equal(body.event, 'monitor.domain_expiring');
    assert.match(
      body.message,
      new RegExp(`^Domain expiring\\.rdaptest of "(Shop|API)" expires in 10 days \\(on ${expiration.slice(0, 10)}\\)\\.$`),
    );
    assert.equal(body.data.domain.registrar, 'Test Registrar');
    assert.equal(body.data.threshold_days, 14);

    // The next pass: not due yet, nothing asked; a day later: asked again, nothing more to say.
    await pass();
    assert.equal(lookups('expiring.rdaptest'), 1);
    clock.advance(DAY);
    await pass();
    assert.equal(lookups('expiring.rdaptest'), 2);
    assert.deepEqual(await warnings(shop), [[14, expiration]]);

    // Renewed for 40 days: nothing yet; 12 days on, 28 days left, the 30-day warning of the new date.
    const first = expiration;
    const renewed = inDays(40);
    expiration = renewed;
    clock.advance(DAY);
    await pass();
    assert.equal((await row('expiring.rdaptest'))?.expires_at, Date.parse(renewed));
    assert.equal((await warnings(shop)).length, 1);
    clock.advance(12 * DAY);
    await pass();
    assert.equal(lookups('expiring.rdaptest'), 4);
    assert.deepEqual(await warnings(shop), [
      [14, first],
      [30, renewed],
    ]);
    assert.equal((await warnings(api2)).length, 2);
    assert.deepEqual(await warnings(quiet), []);
  });

  it('keeps the last date through a failed lookup and tries again within the hour', async () => {
    registryDown = false;
    await monitor('Flaky', 'https://www.flaky.rdaptest/');
    await pass();
    assert.equal((await row('flaky.rdaptest'))?.expires_at, Date.parse('2099-01-01T00:00:00Z'));

    registryDown = true;
    clock.advance(DAY);
    await pass();
    const failed = await row('flaky.rdaptest');
    assert.equal(failed?.ok, false);
    assert.match(failed?.error ?? '', /^RDAP server answered 503 for flaky\.rdaptest$/);
    assert.equal(failed?.expires_at, Date.parse('2099-01-01T00:00:00Z'), 'the last date known stays');
    assert.equal(failed?.next_lookup_at, clock.now() + HOUR);

    registryDown = false;
    const before = lookups('flaky.rdaptest');
    clock.advance(HOUR);
    await pass();
    assert.equal(lookups('flaky.rdaptest'), before + 1);
    const recovered = await row('flaky.rdaptest');
    assert.deepEqual([recovered?.ok, recovered?.error], [true, null]);
  });

  it('asks nothing for an address, a reserved name, or a domain without an active monitor', async () => {
    const before = asked.length;
    await monitor('Local', 'https://127.0.0.1:8443/');
    await monitor('Docs', 'https://docs.example.com/');
    await monitor('Paused', 'https://www.paused.rdaptest/', { active: false });
    clock.advance(2 * DAY);
    await pass();
    assert.deepEqual(
      asked.slice(before).filter((p) => !p.endsWith('/expiring.rdaptest') && !p.endsWith('/flaky.rdaptest')),
      [],
    );
    assert.equal(await row('paused.rdaptest'), undefined);
  });

  it('lets one process look up at a time', async () => {
    const other = startDomainExpiry({ sql: cp.db.sql, log: quietLog, clock, bootstrapUrl: `${base}/bootstrap.json`, everyMs: 3_600_000 });
    try {
      clock.advance(2 * DAY);
      const before = asked.length;
      assert.equal(await other.runNow(), 0, 'the control plane holds the lease');
      assert.equal(asked.length, before);
      assert.ok((await pass()) > 0);
    } finally {
      await other.stop();
    }
  });
});
