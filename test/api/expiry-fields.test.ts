import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
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
});
