import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { webClient } from '../web/client.ts';

describe('maintenance on the public status page', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let slug: string;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    const created = await api('POST', '/status-pages', { project_id: ada.project_id, title: 'Ada status' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    slug = created.body.data.slug;
  });
  after(() => cp.stop());

  const page = async () => (await webClient(cp.url).get(`/status/${slug}`)).text;
  const window = async (body: Record<string, unknown>) => {
    const res = await api('POST', '/maintenance-windows', { project_id: ada.project_id, ...body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data.id as string;
  };
  const inHours = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();

  it('shows no maintenance section while none is ahead', async () => {
    await window({ name: 'Far away', starts_at: inHours(24 * 10), ends_at: inHours(24 * 10 + 1), whole_project: true });
    const text = await page();
    assert.doesNotMatch(text, /Scheduled maintenance/);
    assert.doesNotMatch(text, /Far away/);
  });

  it('announces a window starting within the week, with the services it covers', async () => {
    const m = (await api('POST', '/monitors', { name: 'Checkout', url: 'https://example.com', project_id: ada.project_id })).body.data;
    await window({
      name: 'Payment provider migration',
      description: 'Card payments may fail.',
      starts_at: inHours(48),
      ends_at: inHours(50),
      monitor_ids: [m.id],
    });
    const text = await page();
    assert.match(text, /Scheduled maintenance/);
    assert.match(text, /Payment provider migration/);
    assert.match(text, /Card payments may fail\./);
    assert.match(text, />Scheduled</);
    assert.match(text, /Checkout/);
  });

  it('shows a window while it runs', async () => {
    await window({ name: 'Database failover', starts_at: inHours(-0.5), ends_at: inHours(0.5), whole_project: true });
    const text = await page();
    assert.match(text, /Database failover/);
    assert.match(text, /In progress/);
    assert.match(text, /All services/);
  });
});
