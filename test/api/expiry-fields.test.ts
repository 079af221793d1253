import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CertificateInfo } from '../../shared/src/contracts/checks.ts';
import { storeResults } from '../../control-plane/src/monitors/ingest/store.ts';
import { apiClient, assertInvalid, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

describe('monitors API: certificate and domain expiry warnings', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  const valid = () => ({ name: 'Shop', url: 'https://shop.example.com/', project_id: ada.project_id });

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
  });
  after(() => cp.stop());

  it('warns at 30, 14, 7 and 1 days unless told otherwise', async () => {
    const res = await api('POST', '/monitors', valid());
    assert.equal(res.status, 201);
    assert.deepEqual(res.body.data.certificate_expiry_days, [30, 14, 7, 1]);
    assert.deepEqual(res.body.data.domain_expiry_days, [30, 14, 7, 1]);
  });

  it('stores the days without repeats, the most distant first, and keeps them when an update leaves them out', async () => {
    const res = await api('POST', '/monitors', { ...valid(), certificate_expiry_days: [7, 60, 7, 21], domain_expiry_days: [90] });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body.data.certificate_expiry_days, [60, 21, 7]);
    assert.deepEqual(res.body.data.domain_expiry_days, [90]);
    const [row] = await cp.db.sql<{ c: number[]; d: number[] }[]>`
      select certificate_expiry_days as c, domain_expiry_days as d from monitors where id = ${res.body.data.id}`;
    assert.deepEqual(row, { c: [60, 21, 7], d: [90] });

    const renamed = await api('PUT', `/monitors/${res.body.data.id}`, { name: 'Shop EU' });
    assert.deepEqual(renamed.body.data.certificate_expiry_days, [60, 21, 7]);
    assert.deepEqual(renamed.body.data.domain_expiry_days, [90]);
    const changed = await api('PUT', `/monitors/${res.body.data.id}`, { domain_expiry_days: [1, 365] });
    assert.deepEqual(changed.body.data.domain_expiry_days, [365, 1]);
    assert.deepEqual(changed.body.data.certificate_expiry_days, [60, 21, 7]);
  });

  it('turns a warning off with an empty list', async () => {
    const res = await api('POST', '/monitors', { ...valid(), certificate_expiry_days: [] });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body.data.certificate_expiry_days, []);
    assert.deepEqual(res.body.data.domain_expiry_days, [30, 14, 7, 1]);
    const off = await api('PUT', `/monitors/${res.body.data.id}`, { domain_expiry_days: [] });
    assert.deepEqual(off.body.data.domain_expiry_days, []);
    assert.deepEqual((await api('GET', `/monitors/${res.body.data.id}`)).body.data.domain_expiry_days, []);
  });

  it('refuses days outside 1 to 365, fractions, more than 10 and anything but a list, naming the field', async () => {
    assertInvalid(await api('POST', '/monitors', { ...valid(), certificate_expiry_days: [30, 0] }), ['certificate_expiry_days.1']);
    assertInvalid(await api('POST', '/monitors', { ...valid(), domain_expiry_days: [366] }), ['domain_expiry_days.0']);
    assertInvalid(await api('POST', '/monitors', { ...valid(), domain_expiry_days: [1.5] }), ['domain_expiry_days.0']);
    assertInvalid(await api('POST', '/monitors', { ...valid(), certificate_expiry_days: 30 }), ['certificate_expiry_days']);
    const eleven = Array.from({ length: 11 }, (_, i) => i + 1);
    const tooMany = await api('POST', '/monitors', { ...valid(), certificate_expiry_days: eleven });
    assertInvalid(tooMany, ['certificate_expiry_days']);
    assert.match(tooMany.body.errors.certificate_expiry_days[0], /certificate_expiry_days.*more than 10/);
    const created = await api('POST', '/monitors', valid());
    assertInvalid(await api('PUT', `/monitors/${created.body.data.id}`, { domain_expiry_days: ['7'] }), ['domain_expiry_days.0']);
  });

  it('shows the domain of the URL host, not yet looked up, and none for an address or a reserved name', async () => {
    const shop = await api('POST', '/monitors', { ...valid(), url: 'https://api.eu.shop.co.uk/health' });
    assert.deepEqual(shop.body.data.domain, { name: 'shop.co.uk', expires_at: null, registrar: null, checked_at: null, error: null });
    const moved = await api('PUT', `/monitors/${shop.body.data.id}`, { url: 'https://www.acme.io/' });
    assert.equal(moved.body.data.domain.name, 'acme.io');
    for (const url of ['https://10.0.0.7/', 'https://shop.example.com/', 'https://app.staging.test/']) {
      assert.equal((await api('POST', '/monitors', { ...valid(), url })).body.data.domain, null, url);
    }
  });

  it('shows the latest certificate the checks saw, its days left counted from now, on a monitor and in the list', async () => {
    const created = await api('POST', '/monitors', { ...valid(), name: 'Certified' });
    const id = created.body.data.id as string;
    assert.equal(created.body.data.certificate, null);
    const checkedAt = Date.now() - 2 * 86_400_000;
    const certificate: CertificateInfo = {
      subject: 'CN=shop.example.com',
      issuer: 'CN=Test CA',
      sans: ['shop.example.com'],
      valid_from: new Date(checkedAt - 86_400_000).toISOString(),
      valid_to: new Date(checkedAt + 30 * 86_400_000).toISOString(),
      days_left: 30,
      fingerprint256: 'AB:CD',
    };
    const at = new Date(checkedAt).toISOString();
    await storeResults(
      cp.db.sql,
      [
        {
          monitor_id: id,
          region: 'eu',
          agent_id: 'agent-eu',
          scheduled_at: at,
          checked_at: at,
          ok: true,
          status_code: 200,
          timings: { dns: 1, connect: 1, tls: 1, ttfb: 1, total: 4 },
          error: null,
          attempts: 1,
          details: { certificate },
        },
      ],
      new Date(),
    );
    const got = (await api('GET', `/monitors/${id}`)).body.data.certificate;
    assert.deepEqual({ ...got, days_left: undefined }, { ...certificate, days_left: undefined });
    assert.ok(Math.abs(got.days_left - 28) < 0.01, `${got.days_left} days left now`);
    const listed = (await api('GET', `/monitors?project_id=${ada.project_id}&per_page=100`)).body.data.find(
      (m: { id: string }) => m.id === id,
    );
    assert.equal(listed.certificate.fingerprint256, 'AB:CD');
    assert.equal(listed.domain, null);
  });
});
