import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { backdate, seedIncident } from '../web/seed.ts';

const H = 3_600_000;
const ago = (ms: number) => new Date(Date.now() - ms);

/** What a README or Shields reads at a badge address: an SVG or endpoint JSON of a status, an uptime or a response time. */
describe('badges of monitors, heartbeats and status page components', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;

  const get = (path: string, headers: Record<string, string> = {}) => fetch(cp.url + path, { headers });
  const json = async (path: string) => {
    const res = await get(path);
    assert.equal(res.status, 200, `${path}: ${res.status} ${await res.clone().text()}`);
    return (await res.json()) as { schemaVersion: number; label: string; message: string; color: string; labelColor: string };
  };
  const svg = async (path: string) => {
    const res = await get(path);
    assert.equal(res.status, 200, `${path}: ${res.status}`);
    return res.text();
  };
  /** The label and message the badge is named by (its title). */
  const said = async (path: string) => {
    const body = await json(path);
    return `${body.label}: ${body.message}`;
  };
  const refusal = async (path: string) => {
    const res = await get(path);
    assert.match(res.headers.get('content-type')!, /^text\/plain/, path);
    return `${res.status} ${await res.text()}`;
  };

  const monitor = async (name: string) =>
    (await api('POST', '/monitors', { name, url: 'https://internal.example', project_id: ada.project_id })).body.data.id as string;
  const heartbeat = async (name: string) =>
    (await api('POST', '/heartbeats', { name, project_id: ada.project_id, period: 3600 })).body.data.id as string;
  const setStatus = (id: string, status: number, degraded = false) =>
    cp.db
      .sql`update monitors set status = ${status}, degraded_regions = ${degraded ? cp.db.sql.array(['eu-west']) : null} where id = ${id}`;
  /** A badge made as the dashboard makes one. */
  const badgeOf = async (subject: { monitor_id: string } | { heartbeat_id: string }) => {
    const slug = randomBytes(16).toString('base64url').slice(0, 22);
    await cp.db.sql`insert into badges ${cp.db.sql({ slug, ...subject })}`;
    return slug;
  };
  /** A heartbeat's transition as its rules record it in the outbox. */
  const transition = (id: string, kind: 'down' | 'up', at: Date) =>
    cp.db.sql`insert into outbox_events (project_id, kind, payload, created_at) values (${ada.project_id}, ${`heartbeat.${kind}`},
      ${cp.db.sql.json({ subject: { type: 'heartbeat', id }, occurred_at: at.toISOString(), data: { reason: kind === 'down' ? 'missed' : 'ping' } })},
      ${at})`;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
  });
  after(() => cp.stop());

  it('says a monitor’s status in the status page’s words', async () => {
    const id = await monitor('Checkout API');
    const slug = await badgeOf({ monitor_id: id });
    const path = `/badge/${slug}/status.json`;
    assert.equal(await said(path), 'Checkout API: pending', 'never checked');
    const cases: [string, () => Promise<unknown>, string, string][] = [
      ['up', () => setStatus(id, 1), 'operational', '#2e7d32'],
      ['degraded', () => setStatus(id, 1, true), 'degraded', '#8a6100'],
      ['down', () => setStatus(id, 2), 'down', '#c62828'],
      ['paused', () => cp.db.sql`update monitors set active = false where id = ${id}`, 'paused', '#5f6b76'],
    ];
    for (const [name, change, message, color] of cases) {
      await change();
      const body = await json(path);
      assert.deepEqual(body, { schemaVersion: 1, label: 'Checkout API', message, color, labelColor: '#555555', cacheSeconds: 300 }, name);
      const image = await svg(`/badge/${slug}/status.svg`);
      assert.match(image, new RegExp(`<title>Checkout API: ${message}</title>`), name);
      assert.match(image, new RegExp(`role="img" aria-label="Checkout API: ${message}"`), name);
      assert.match(image, new RegExp(`fill="${color}"`), name);
    }
    await cp.db.sql`update monitors set active = true where id = ${id}`;
    await setStatus(id, 2);
    const w = await api('POST', '/maintenance-windows', {
      project_id: ada.project_id,
      name: 'Database upgrade',
      starts_at: ago(60_000).toISOString(),
      ends_at: new Date(Date.now() + H).toISOString(),
      monitor_ids: [id],
    });
    assert.equal(w.status, 201, JSON.stringify(w.body));
    assert.equal(await said(path), 'Checkout API: maintenance', 'down under maintenance is maintenance, as on the page');
    await api('DELETE', `/maintenance-windows/${w.body.data.id}`);
    assert.equal(await said(path), 'Checkout API: down');
  });

  it('says a heartbeat’s status, and has no response time', async () => {
    const id = await heartbeat('Nightly backup');
    const slug = await badgeOf({ heartbeat_id: id });
    assert.equal(await said(`/badge/${slug}/status.json`), 'Nightly backup: pending', 'never pinged');
    await cp.db.sql`update heartbeats set status = 'down', down_since = now() - interval '1 hour' where id = ${id}`;
    assert.equal(await said(`/badge/${slug}/status.json`), 'Nightly backup: down');
    await cp.db.sql`update heartbeats set active = false where id = ${id}`;
    assert.equal(await said(`/badge/${slug}/status.json`), 'Nightly backup: paused');
    assert.equal(await refusal(`/badge/${slug}/response.svg`), '404 A heartbeat has no response time: use status or uptime.');
  });

  it('gives a monitor’s uptime over each window, from its incidents', async () => {
    const id = await monitor('Search');
    await backdate(cp.db.sql, id, 45);
    await setStatus(id, 1);
    // Six hours down, two days ago: outside the last day, inside every longer window.
    await seedIncident(cp.db.sql, id, ago(48 * H), ago(42 * H));
    const slug = await badgeOf({ monitor_id: id });
    assert.equal(await said(`/badge/${slug}/uptime.json?window=24h`), 'uptime 24h: 100%');
    assert.equal(await said(`/badge/${slug}/uptime.json?window=7d`), 'uptime 7d: 96.4%');
    assert.equal(await said(`/badge/${slug}/uptime.json`), 'uptime 30d: 99.17%', '30 days unless asked');
    assert.equal(await said(`/badge/${slug}/uptime.json?window=90d`), 'uptime 90d: 99.44%', 'since creation, 45 days ago');
    assert.equal((await json(`/badge/${slug}/uptime.json?window=7d`)).color, '#8a6100');
    assert.equal((await json(`/badge/${slug}/uptime.json`)).color, '#5f7300');
    assert.match(await svg(`/badge/${slug}/uptime.svg?window=7d`), /<title>uptime 7d: 96\.4%<\/title>/);
  });

  it('gives a heartbeat’s uptime from its down periods', async () => {
    const id = await heartbeat('Invoices export');
    await cp.db.sql`update heartbeats set created_at = now() - interval '10 days' where id = ${id}`;
    // Twelve hours down three days ago; then down again for the last six hours.
    await transition(id, 'down', ago(72 * H));
    await transition(id, 'up', ago(60 * H));
    await transition(id, 'down', ago(6 * H));
    await cp.db.sql`update heartbeats set status = 'down', down_since = ${ago(6 * H)} where id = ${id}`;
    const slug = await badgeOf({ heartbeat_id: id });
    assert.equal(await said(`/badge/${slug}/uptime.json?window=24h`), 'uptime 24h: 75.0%');
    assert.equal(await said(`/badge/${slug}/uptime.json?window=7d`), 'uptime 7d: 89.3%', '18 hours of 168');
    assert.equal(await said(`/badge/${slug}/uptime.json?window=30d`), 'uptime 30d: 92.5%', '18 hours of the 240 since creation');
  });

  it('gives a monitor’s mean and 95th percentile response time of its successful checks', async () => {
    const id = await monitor('Catalogue');
    await setStatus(id, 1);
    const row = (at: Date, total_ms: number, ok = true) => ({
      monitor_id: id,
      scheduled_at: at,
      region: 'eu-west',
      checked_at: at,
      agent_id: 'eu-west-1',
      ok,
      status_code: ok ? 200 : null,
      dns_ms: 1,
      connect_ms: 1,
      tls_ms: 1,
      ttfb_ms: total_ms,
      total_ms,
      attempts: 1,
    });
    // 10, 20 ... 210 ms in the last day (mean 110, 95th percentile 200), a failure of 10 s that is no
    // response time, and a 5 s check two days ago.
    const rows = Array.from({ length: 21 }, (_, i) => row(ago((i + 1) * 60_000), 10 * (i + 1)));
    rows.push(row(ago(30 * 60_000 + 1000), 10_000, false), row(ago(48 * H), 5000));
    await cp.db.sql`insert into check_results ${cp.db.sql(rows)}`;
    const slug = await badgeOf({ monitor_id: id });
    assert.equal(await said(`/badge/${slug}/response.json`), 'avg response 24h: 110 ms');
    assert.equal(await said(`/badge/${slug}/response.json?stat=p95`), 'p95 response 24h: 200 ms');
    assert.equal(await said(`/badge/${slug}/response.json?window=7d`), 'avg response 7d: 332 ms');
    assert.equal((await json(`/badge/${slug}/response.json`)).color, '#0b63b6');
    const quiet = await badgeOf({ monitor_id: await monitor('Quiet') });
    assert.equal(await said(`/badge/${quiet}/response.json`), 'avg response 24h: no data');
    assert.equal(
      await refusal(`/badge/${slug}/response.svg?window=90d`),
      '400 window: checks are kept 30 days; use 24h, 7d, 30d.',
      'raw checks are gone past their retention',
    );
  });

  it('refuses what it cannot draw with a short text, never a 5xx', async () => {
    const slug = await badgeOf({ monitor_id: await monitor('Refusals') });
    const cases: [string, string][] = [
      [`/badge/${slug}/latency.svg`, '404 No such badge: use status, uptime or response, as .svg or .json.'],
      [`/badge/${slug}/status.png`, '404 No such badge: use status, uptime or response, as .svg or .json.'],
      [`/badge/${slug}/uptime.svg?window=1y`, '400 window: use one of 24h, 7d, 30d, 90d.'],
      [`/badge/${slug}/uptime.svg?window=7d&window=30d`, '400 window: use one of 24h, 7d, 30d, 90d.'],
      [`/badge/${slug}/response.json?stat=p99`, '400 stat: use one of avg, p95.'],
      [`/badge/${'A'.repeat(22)}/status.svg`, '404 No badge at this address.'],
      ['/badge/short/status.svg', '404 No badge at this address.'],
      [`/status/${'A'.repeat(22)}/badge/${randomUUIDish()}/status.svg`, '404 No badge at this address.'],
    ];
    for (const [path, expected] of cases) assert.equal(await refusal(path), expected, path);
    assert.equal((await get(`/badge/${slug}/status.svg?v=2&cachebust=1`)).status, 200, 'fields it does not read are ignored');
  });

  it('lets a cache keep a badge a short while, and revalidate it by its entity tag', async () => {
    const id = await monitor('Cached');
    await setStatus(id, 1);
    const slug = await badgeOf({ monitor_id: id });
    const first = await get(`/badge/${slug}/status.svg`);
    assert.equal(first.headers.get('content-type'), 'image/svg+xml; charset=utf-8');
    assert.equal(first.headers.get('cache-control'), 'public, max-age=30');
    const etag = first.headers.get('etag')!;
    assert.match(etag, /^"[A-Za-z0-9_-]{27}"$/);
    const again = await get(`/badge/${slug}/status.svg`, { 'if-none-match': etag });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), '');
    assert.equal((await get(`/badge/${slug}/status.svg`, { 'if-none-match': `W/${etag}, "other"` })).status, 304);
    await setStatus(id, 2);
    const changed = await get(`/badge/${slug}/status.svg`, { 'if-none-match': etag });
    assert.equal(changed.status, 200, 'a changed status is a new entity');
    assert.notEqual(changed.headers.get('etag'), etag);
    const uptime = await get(`/badge/${slug}/uptime.json`);
    assert.equal(uptime.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(uptime.headers.get('cache-control'), 'public, max-age=300');
    assert.equal(uptime.headers.get('access-control-allow-origin'), '*');
    const refused = await get(`/badge/${slug}/uptime.json?window=2d`);
    assert.equal(refused.headers.get('cache-control'), 'no-store');
  });

  it('takes a label of its own, or none', async () => {
    const slug = await badgeOf({ monitor_id: await monitor('Labelled') });
    assert.equal((await json(`/badge/${slug}/uptime.json?label=API%20uptime`)).label, 'API uptime');
    const bare = await svg(`/badge/${slug}/status.svg?label=`);
    assert.match(bare, /<title>pending<\/title>/);
    assert.doesNotMatch(bare, /fill="#555555"/, 'no label side');
    assert.match(await svg(`/badge/${slug}/status.svg?label=%3Cb%3E`), /<title>&lt;b&gt;: pending<\/title>/, 'escaped');
  });

  it('keeps the first badge address as it was', async () => {
    const id = await monitor('Legacy');
    await setStatus(id, 1);
    const slug = await badgeOf({ monitor_id: id });
    const res = await get(`/badge/${slug}.svg`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('cache-control')!, /no-cache/);
    assert.ok(res.headers.get('etag'));
    assert.match(await res.text(), /<title>Legacy: up · 100%<\/title>/);
  });

  describe('through a status page', () => {
    let shop: string;
    let hidden: string;
    let job: string;
    let grouped: { id: string; slug: string };
    let everything: { id: string; slug: string };

    before(async () => {
      shop = await monitor('shop-prod-eu');
      hidden = await monitor('Internal admin');
      job = await heartbeat('backup-job');
      await setStatus(shop, 1);
      await setStatus(hidden, 2);
      const made = async (body: Record<string, unknown>) => {
        const res = await api('POST', '/status-pages', { project_id: ada.project_id, title: 'Acme', ...body });
        assert.equal(res.status, 201, JSON.stringify(res.body));
        return res.body.data as { id: string; slug: string };
      };
      grouped = await made({
        groups: [
          { name: 'Storefront', components: [{ type: 'monitor', id: shop, display_name: 'Web shop' }] },
          { name: 'Jobs', components: [{ type: 'heartbeat', id: job }] },
        ],
      });
      everything = await made({ title: 'Everything' });
    });

    it('draws the badges of the components it shows, by the names it gives them', async () => {
      const at = (component: string, file: string) => `/status/${grouped.slug}/badge/${component}/${file}`;
      assert.equal(await said(at(shop, 'status.json')), 'Web shop: operational');
      assert.match(await svg(at(shop, 'status.svg')), /<title>Web shop: operational<\/title>/);
      assert.equal(await said(at(shop, 'uptime.json?window=24h')), 'uptime 24h: 100%');
      assert.equal(await said(at(job, 'status.json')), 'backup-job: pending');
      assert.equal(await said(at(shop.toUpperCase(), 'status.json')), 'Web shop: operational', 'an id in capitals is the same id');
    });

    it('draws nothing of what it does not show', async () => {
      assert.equal(await refusal(`/status/${grouped.slug}/badge/${hidden}/status.svg`), '404 No badge at this address.');
      assert.equal(await refusal(`/status/${grouped.slug}/badge/not-a-uuid/status.svg`), '404 No badge at this address.');
      const bob = await createAccount(cp.db.sql);
      const theirs = (
        await apiClient(cp.url, bob.token)('POST', '/monitors', { name: 'theirs', url: 'https://b.example', project_id: bob.project_id })
      ).body.data.id;
      assert.equal(await refusal(`/status/${everything.slug}/badge/${theirs}/status.svg`), '404 No badge at this address.');
    });

    it('draws any monitor or heartbeat of the project on a page without groups, as the page shows them all', async () => {
      assert.equal(await said(`/status/${everything.slug}/badge/${hidden}/status.json`), 'Internal admin: down');
      assert.equal(await said(`/status/${everything.slug}/badge/${job}/status.json`), 'backup-job: pending');
    });

    it('stops with the page’s old address', async () => {
      const path = `/status/${grouped.slug}/badge/${shop}/status.svg`;
      assert.equal((await get(path)).status, 200);
      const moved = await api('POST', `/status-pages/${grouped.id}/address`);
      assert.equal(moved.status, 200);
      assert.equal(await refusal(path), '404 No badge at this address.');
      assert.equal((await get(`/status/${moved.body.data.slug}/badge/${shop}/status.svg`)).status, 200);
    });
  });
});

/** A well-formed id that names nothing. */
function randomUUIDish(): string {
  const hex = randomBytes(16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20)}`;
}
