import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { webClient } from '../web/client.ts';
import { seedIncident } from '../web/seed.ts';

/** What a visitor reads at a status page's address: its groups, the banner in words, nothing it does not show. */
describe('the public status page', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let shop: string;
  let search: string;
  let internal: string;
  let backup: string;

  const monitor = async (name: string) =>
    (await api('POST', '/monitors', { name, url: 'https://internal.example', project_id: ada.project_id })).body.data.id as string;
  const setStatus = (id: string, status: number, degraded = false) =>
    cp.db
      .sql`update monitors set status = ${status}, degraded_regions = ${degraded ? cp.db.sql.array(['eu-west']) : null} where id = ${id}`;
  const page = async (body: Record<string, unknown>) => {
    const res = await api('POST', '/status-pages', { project_id: ada.project_id, title: 'Acme', ...body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data as { id: string; slug: string };
  };
  const visit = async (slug: string) => {
    const res = await webClient(cp.url).get(`/status/${slug}`);
    assert.equal(res.status, 200);
    return res.text;
  };
  const bannerOf = (text: string) => /data-testid="overall" data-level="([a-z_]+)"[^]*?<strong>([^<]+)<\/strong>/.exec(text)!.slice(1, 3);

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    shop = await monitor('shop-prod-eu');
    search = await monitor('search-prod-eu');
    internal = await monitor('Internal admin');
    backup = (await api('POST', '/heartbeats', { name: 'backup-job', project_id: ada.project_id })).body.data.id;
    for (const id of [shop, search, internal]) await setStatus(id, 1);
  });
  after(() => cp.stop());

  it('shows its groups in order, with the names and descriptions chosen, and nothing it does not show', async () => {
    await seedIncident(cp.db.sql, internal, new Date(Date.now() - 600_000), null, 'db password rejected');
    await setStatus(internal, 2);
    const p = await page({
      description: 'Our public services.',
      groups: [
        {
          name: 'Storefront',
          components: [
            { type: 'monitor', id: shop, display_name: 'Web shop', description: 'Browsing and checkout' },
            { type: 'monitor', id: search, display_name: 'Search' },
          ],
        },
        { name: 'Background jobs', components: [{ type: 'heartbeat', id: backup, display_name: 'Backups' }] },
      ],
    });
    const text = await visit(p.slug);
    assert.match(text, /<h1>Acme<\/h1>/);
    assert.match(text, /Our public services\./);
    const headings = [...text.matchAll(/<h([1-3])[^>]*>([^<]*)</g)].map((m) => `h${m[1]} ${m[2]!.trim()}`);
    assert.deepEqual(headings, ['h1 Acme', 'h2 Storefront', 'h3 Web shop', 'h3 Search', 'h2 Background jobs', 'h3 Backups']);
    assert.match(text, /Browsing and checkout/);
    assert.doesNotMatch(text, /shop-prod-eu|search-prod-eu|backup-job/, 'the display names stand for the own names');
    assert.doesNotMatch(text, /Internal admin|Ongoing incidents|db password/, 'an incident of a monitor not on the page is not shown');
    assert.deepEqual(bannerOf(text), ['operational', 'All systems operational'], 'a monitor not shown does not count');
    assert.equal((text.match(/<svg class="bars"/g) ?? []).length, 2, 'bars for the two monitors, none for the heartbeat');
    // Landmarks and states in words, not only colours.
    assert.match(text, /<header class="public-head">/);
    assert.match(text, /<main id="main"/);
    assert.match(text, /<section class="card" aria-labelledby="group-0"/);
    assert.match(text, /<span class="pill up" data-status="up">Up<\/span>/);
    assert.match(text, /<span class="pill new" data-status="new"\s*>New<\/span\s*>/);
    await setStatus(internal, 1);
    await cp.db.sql`update incidents set ended_at = now() where monitor_id = ${internal} and ended_at is null`;
  });

  it('says the banner in words for every level', async () => {
    const p = await page({
      groups: [{ name: 'All', components: [shop, search, internal].map((id) => ({ type: 'monitor', id })) }],
    });
    const cases: [string, () => Promise<unknown>, string, string][] = [
      ['all up', async () => {}, 'operational', 'All systems operational'],
      ['one degraded', () => setStatus(search, 1, true), 'degraded', 'Degraded performance'],
      ['one down of three', () => setStatus(search, 2), 'partial_outage', 'Partial outage'],
      ['two down of three', () => setStatus(shop, 2), 'major_outage', 'Major outage'],
    ];
    for (const [name, change, level, words] of cases) {
      await change();
      assert.deepEqual(bannerOf(await visit(p.slug)), [level, words], name);
    }
    await setStatus(shop, 1);
    await setStatus(search, 1);
    const w = await api('POST', '/maintenance-windows', {
      project_id: ada.project_id,
      name: 'Search reindex',
      starts_at: new Date(Date.now() - 60_000).toISOString(),
      ends_at: new Date(Date.now() + 3_600_000).toISOString(),
      monitor_ids: [search],
    });
    assert.equal(w.status, 201, JSON.stringify(w.body));
    const text = await visit(p.slug);
    assert.deepEqual(bannerOf(text), ['maintenance', 'Under maintenance']);
    assert.match(text, /<span class="pill maintenance" data-status="maintenance">Maintenance<\/span>/);
    assert.match(text, /Scheduled maintenance[^]*Search reindex[^]*In progress/);
    // A page that does not show the search does not announce its maintenance.
    const other = await page({ groups: [{ name: 'Shop', components: [{ type: 'monitor', id: shop }] }] });
    const without = await visit(other.slug);
    assert.doesNotMatch(without, /Search reindex/);
    assert.deepEqual(bannerOf(without), ['operational', 'All systems operational']);
    await api('DELETE', `/maintenance-windows/${w.body.data.id}`);
  });

  it('shows every monitor and heartbeat of the project while it has no groups, as pages did before groups', async () => {
    const p = await page({ title: 'Everything' });
    const text = await visit(p.slug);
    const headings = [...text.matchAll(/<h([23])[^>]*>([^<]*)</g)].map((m) => `h${m[1]} ${m[2]!.trim()}`);
    assert.deepEqual(headings, [
      'h2 Services',
      'h3 shop-prod-eu',
      'h3 search-prod-eu',
      'h3 Internal admin',
      'h2 Scheduled jobs',
      'h3 backup-job',
    ]);
  });

  it('refreshes its content as a fragment, and answers an unknown address with a 404 page', async () => {
    const p = await page({ groups: [{ name: 'Web', components: [{ type: 'monitor', id: shop, display_name: 'Shop' }] }] });
    const fragment = await webClient(cp.url).get(`/status/${p.slug}?fragment=1`);
    assert.equal(fragment.status, 200);
    assert.doesNotMatch(fragment.text, /<html|<h1/);
    assert.match(fragment.text, /data-testid="overall"/);
    assert.match(fragment.text, /<h2 id="group-0">Web<\/h2>/);
    const missing = await webClient(cp.url).get('/status/AAAAAAAAAAAAAAAAAAAAAA');
    assert.equal(missing.status, 404);
    assert.match(missing.headers.get('content-type')!, /text\/html/);
  });
});
