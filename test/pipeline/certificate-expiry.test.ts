import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CertificateInfo } from '../../shared/src/contracts/checks.ts';
import type { DomainEvent } from '../../shared/src/contracts/events.ts';
import type { CheckResult } from '../../shared/src/contracts/monitoring.ts';
import { recordWarnings, type DueWarning } from '../../control-plane/src/monitors/expiry-repo.ts';
import { storeResults } from '../../control-plane/src/monitors/ingest/store.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startWebhookSink, type Target } from '../harness/http.ts';
import { alertsRouted } from '../notify/helpers.ts';

const DAY = 86_400_000;
const t0 = Date.parse('2030-03-01T12:00:00.000Z');
const expiresAt = new Date(t0 + 60 * DAY).toISOString();

function certificate(fingerprint256: string, validTo: string, checkedAt: number): CertificateInfo {
  return {
    subject: 'CN=shop.example.com',
    issuer: 'CN=Test CA, O=Example',
    sans: ['shop.example.com', 'www.shop.example.com'],
    valid_from: new Date(t0 - 30 * DAY).toISOString(),
    valid_to: validTo,
    days_left: Math.round(((Date.parse(validTo) - checkedAt) / DAY) * 1000) / 1000,
    fingerprint256,
  };
}

/** A passing check `day` days after t0 (one slot a day per region) that presented this certificate. */
function checked(monitorId: string, day: number, cert: { fingerprint: string; validTo: string } | null, region = 'eu'): CheckResult {
  const at = t0 + day * DAY;
  return {
    monitor_id: monitorId,
    region,
    agent_id: `agent-${region}`,
    scheduled_at: new Date(at).toISOString(),
    checked_at: new Date(at + 5).toISOString(),
    ok: true,
    status_code: 200,
    timings: { dns: 1, connect: 2, tls: 3, ttfb: 5, total: 9 },
    error: null,
    attempts: 1,
    ...(cert ? { details: { certificate: certificate(cert.fingerprint, cert.validTo, at + 5) } } : {}),
  };
}

describe('certificate expiry warnings from check results', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let sink: Target;
  const first = { fingerprint: 'AA:01', validTo: expiresAt };

  const store = (batch: CheckResult[], day: number) => storeResults(cp.db.sql, batch, new Date(t0 + day * DAY + 60_000));
  const warnings = (events: DomainEvent[]) =>
    events.filter((e) => e.kind === 'monitor.certificate_expiring').map((e) => e.data.threshold_days as number);
  const recorded = async (monitorId: string) =>
    (
      await cp.db.sql<{ threshold: number }[]>`
        select (payload->'data'->>'threshold_days')::int as threshold from outbox_events
        where kind = 'monitor.certificate_expiring' and payload->'subject'->>'id' = ${monitorId} order by created_at`
    ).map((r) => r.threshold);
  const kept = async (monitorId: string) =>
    (
      await cp.db.sql<{ fingerprint256: string; checked_at: string }[]>`
        select fingerprint256, checked_at::text as checked_at from monitor_certificates where monitor_id = ${monitorId}`
    )[0];
  const monitor = async (body: Record<string, unknown> = {}) =>
    (await api('POST', '/monitors', { name: 'Shop', url: 'https://shop.example.com/', project_id: ada.project_id, ...body })).body.data
      .id as string;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api', 'notify'] });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    sink = await startWebhookSink();
    await api('POST', '/integrations', { project_id: ada.project_id, name: 'ops', type: 'webhook', config: { url: sink.url } });
  });
  after(async () => {
    await sink.close();
    await cp.stop();
  });

  it('keeps the latest certificate, written once while it stays the same', async () => {
    const id = await monitor();
    assert.deepEqual(await store([checked(id, 0, first)], 0), []);
    const once = await kept(id);
    assert.equal(once?.fingerprint256, 'AA:01');
    assert.deepEqual(await store([checked(id, 1, first), checked(id, 1, first, 'us')], 1), []);
    assert.deepEqual(await kept(id), once, 'an unchanged certificate is not written again');
    // A result without a certificate (a plain HTTP check, a refused connection) leaves it be.
    assert.deepEqual(await store([checked(id, 2, null)], 2), []);
    assert.deepEqual(await kept(id), once);
  });

  it('forgets the certificate when the monitor moves to another host, not when its path changes', async () => {
    const id = await monitor();
    await store([checked(id, 0, first)], 0);
    assert.equal((await api('PUT', `/monitors/${id}`, { url: 'https://shop.example.com/health' })).status, 200);
    assert.equal((await kept(id))?.fingerprint256, 'AA:01', 'same host: same certificate');
    assert.equal((await api('PUT', `/monitors/${id}`, { url: 'https://shop.example.com:8443/health' })).status, 200);
    assert.equal(await kept(id), undefined, 'another port presents its own certificate');
    assert.equal((await api('GET', `/monitors/${id}`)).body.data.certificate, null);
  });

  it('warns once per threshold crossed, a replayed batch adding nothing, and sends the warning to the integrations', async () => {
    const id = await monitor();
    assert.deepEqual(warnings(await store([checked(id, 0, first)], 0)), []);
    // 60 days left at t0: 29 days left on day 31 crosses 30.
    const crossing = [checked(id, 31, first), checked(id, 31, first, 'us')];
    const events = await store(crossing, 31);
    assert.deepEqual(warnings(events), [30]);
    const warning = events.find((e) => e.kind === 'monitor.certificate_expiring')!;
    assert.equal(warning.occurred_at, crossing[0]!.checked_at, 'dated by the check that crossed it');
    assert.deepEqual(warning.subject, { type: 'monitor', id, name: 'Shop' });
    assert.deepEqual(warning.data, {
      url: 'https://shop.example.com/',
      certificate: {
        subject: 'CN=shop.example.com',
        issuer: 'CN=Test CA, O=Example',
        sans: ['shop.example.com', 'www.shop.example.com'],
        valid_to: expiresAt,
        days_left: 29,
      },
      threshold_days: 30,
    });

    assert.deepEqual(await store(crossing, 31), [], 'the same results again: nothing');
    assert.deepEqual(warnings(await store([checked(id, 32, first)], 32)), [], 'the next check, still above 14 days: nothing');
    assert.deepEqual(await recorded(id), [30]);

    const [delivered] = await sink.waitForRequests(1);
    const body = JSON.parse(delivered!.body);
    assert.equal(body.event, 'monitor.certificate_expiring');
    assert.equal(body.message, `Certificate of "Shop" expires in 29 days (on ${expiresAt.slice(0, 10)}).`);
  });

  it('after a pause sends only the most urgent warning due, then the next one when it comes', async () => {
    const id = await monitor();
    // 55 days after the certificate was first seen: 5 days left, so 7 (not 30 and 14 as well).
    assert.deepEqual(warnings(await store([checked(id, 55, first)], 55)), [7]);
    assert.deepEqual(warnings(await store([checked(id, 56, first)], 56)), []);
    assert.deepEqual(warnings(await store([checked(id, 59.5, first)], 59.5)), [1]);
    assert.deepEqual(warnings(await store([checked(id, 61, first)], 61)), [], 'expired: every threshold sent');
    assert.deepEqual(await recorded(id), [7, 1]);
  });

  it('starts over for a renewed certificate', async () => {
    const id = await monitor();
    assert.deepEqual(warnings(await store([checked(id, 50, first)], 50)), [14]);
    const renewed = { fingerprint: 'BB:02', validTo: new Date(t0 + 140 * DAY).toISOString() };
    assert.deepEqual(warnings(await store([checked(id, 51, renewed)], 51)), []);
    assert.equal((await kept(id))?.fingerprint256, 'BB:02');
    // A late result from a region still seeing the old certificate does not bring it back.
    assert.deepEqual(warnings(await store([checked(id, 50.5, first, 'us')], 51)), []);
    assert.equal((await kept(id))?.fingerprint256, 'BB:02');
    assert.deepEqual(warnings(await store([checked(id, 130, renewed)], 130)), [14], 'the renewed one warns at 14 days again');
    assert.deepEqual(await recorded(id), [14, 14]);
  });

  it('records the certificate but no warning for a monitor whose thresholds are empty', async () => {
    const id = await monitor({ certificate_expiry_days: [] });
    assert.deepEqual(await store([checked(id, 58, first)], 58), []);
    assert.equal((await kept(id))?.fingerprint256, 'AA:01');
    assert.deepEqual(await recorded(id), []);
  });

  it('warns at the monitor’s own thresholds', async () => {
    const id = await monitor({ certificate_expiry_days: [45, 3] });
    assert.deepEqual(warnings(await store([checked(id, 20, first)], 20)), [45]);
    assert.deepEqual(warnings(await store([checked(id, 50, first)], 50)), []);
    assert.deepEqual(warnings(await store([checked(id, 58, first)], 58)), [3]);
    await alertsRouted(cp);
  });

  it('records a warning decided twice (two processes, a retried transaction) once, with the thresholds it covers', async () => {
    const id = await monitor();
    const due: DueWarning = {
      kind: 'certificate',
      monitor: { id, project_id: ada.project_id, name: 'Shop', url: 'https://shop.example.com/' },
      certificate: certificate(first.fingerprint, first.validTo, t0 + 55 * DAY),
      threshold: 7,
      thresholdsDays: [30, 14, 7, 1],
      at: new Date(t0 + 55 * DAY),
    };
    const once = await cp.db.sql.begin((tx) => recordWarnings(tx, [due]));
    const twice = await cp.db.sql.begin((tx) => recordWarnings(tx, [due]));
    assert.deepEqual([once.length, twice.length], [1, 0]);
    const keys = await cp.db.sql<{ threshold_days: number }[]>`
      select threshold_days from expiry_warnings where monitor_id = ${id} and kind = 'certificate' and subject = 'AA:01' order by 1`;
    assert.deepEqual(
      keys.map((k) => k.threshold_days),
      [7, 14, 30],
    );
    assert.deepEqual(warnings(await store([checked(id, 56, first)], 56)), [], 'a check then finds them sent');
  });
});
