import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { storeResults } from '../../control-plane/src/monitors/ingest/store.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { webClient, type WebClient } from './client.ts';

const DAY = 86_400_000;

describe('the monitor page: certificate and domain', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let web: WebClient;
  let api: Call;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    web = webClient(cp.url);
    await web.signIn(ada.email, ada.password);
    api = apiClient(cp.url, ada.token);
  });
  after(() => cp.stop());

  const monitor = async (url: string, extra: object = {}) =>
    (await api('POST', '/monitors', { name: 'Shop', url, project_id: ada.project_id, ...extra })).body.data.id as string;
  /** What a card says, its markup taken out. */
  const card = (page: string, testId: string) => {
    const at = page.indexOf(`data-testid="${testId}"`);
    assert.ok(at >= 0, `a ${testId} card`);
    return page
      .slice(at, page.indexOf('</dl>', at))
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ');
  };

  it('shows the certificate the checks saw and the registration of the domain, with how soon each runs out', async () => {
    const id = await monitor('https://shop.acme.io/', { certificate_expiry_days: [21, 7] });
    const now = Date.now();
    const validTo = new Date(now + 10 * DAY + 3_600_000).toISOString();
    const at = new Date(now).toISOString();
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
          details: {
            certificate: {
              subject: 'CN=shop.acme.io',
              issuer: 'CN=R11, O=Let’s Encrypt',
              sans: ['shop.acme.io', 'www.acme.io'],
              valid_from: new Date(now - 80 * DAY).toISOString(),
              valid_to: validTo,
              days_left: 10,
              fingerprint256: 'AA:BB',
            },
          },
        },
      ],
      new Date(now),
    );
    const expiresAt = new Date(now + 200 * DAY).toISOString();
    await cp.db.sql`
      update domain_expiry set expires_at = ${expiresAt}, registrar = 'Acme Registrar', looked_up_at = now(), ok = true
      where domain = 'acme.io'`;

    const page = (await web.get(`/app/monitors/${id}`)).text;
    const certificate = card(page, 'certificate');
    assert.match(certificate, new RegExp(`Valid until ${validTo.slice(0, 10)}`));
    assert.match(certificate, /Days left 10 days Expires soon/);
    assert.match(certificate, /Issuer CN=R11, O=Let’s Encrypt/);
    assert.match(certificate, /Subject CN=shop\.acme\.io/);
    assert.match(certificate, /Names shop\.acme\.io, www\.acme\.io/);
    assert.match(certificate, /Warnings 21, 7 days before/);
    const domain = card(page, 'domain');
    assert.match(domain, /Domain acme\.io/);
    assert.match(domain, new RegExp(`Registered until ${expiresAt.slice(0, 10)} \\((199|200) days\\)`));
    assert.doesNotMatch(domain, /Expires soon/);
    assert.match(domain, /Registrar Acme Registrar/);
    assert.match(domain, /Warnings 30, 14, 7, 1 days before/);
  });

  it('says a domain is not looked up yet, and shows no card for an address without a certificate', async () => {
    const fresh = (await web.get(`/app/monitors/${await monitor('https://status.fresh.dev/', { domain_expiry_days: [] })}`)).text;
    assert.match(card(fresh, 'domain'), /Registered until not looked up yet \(once a day\).*Warnings off/);
    assert.doesNotMatch(fresh, /data-testid="certificate"/);
    const bare = (await web.get(`/app/monitors/${await monitor('http://10.0.0.7/')}`)).text;
    assert.doesNotMatch(bare, /data-testid="(certificate|domain)"/);
  });
});
