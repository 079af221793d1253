import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { manualClock, type ManualClock } from '../heartbeats/manual-clock.ts';

/**
 * Public pages come from a snapshot per page (ADR 0039): a change shown on the page replaces it at
 * once, age replaces it after the maximum age, and viewers never add database queries.
 */
describe('serving public status pages from snapshots', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let clock: ManualClock;
  let shop: string;
  let queries = 0;

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${cp.url}${path}`, { headers }).then(async (r) => ({ status: r.status, headers: r.headers, text: await r.text() }));
  /** Without fetch's own Accept-Encoding and inflating: the bytes as sent. */
  const rawGet = (path: string, headers: Record<string, string>) =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
      const req = request(`${cp.url}${path}`, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      req.end();
    });
  const page = async (title: string) => {
    const res = await api('POST', '/status-pages', {
      project_id: ada.project_id,
      title,
      groups: [{ name: 'Shop', components: [{ type: 'monitor', id: shop }] }],
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data as { id: string; slug: string };
  };
  /** Looks until the page shows `pattern`: the change notification arrives apart from the write. */
  const until = async (path: string, pattern: RegExp) => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const res = await get(path);
      if (pattern.test(res.text)) return res;
      assert.ok(Date.now() < deadline, `${path} never showed ${pattern}`);
      await new Promise((r) => setImmediate(r));
    }
  };
  const queriesDuring = async (fn: () => Promise<unknown>) => {
    const before = queries;
    await fn();
    return queries - before;
  };

  before(async () => {
    clock = manualClock(Date.now());
    cp = await startTestControlPlane({ roles: ['api'], env: { STATUS_PAGE_MAX_AGE_SECONDS: '60' }, clock });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    shop = (await api('POST', '/monitors', { name: 'shop', url: 'https://shop.example', project_id: ada.project_id })).body.data.id;
    await cp.db.sql`update monitors set status = 1 where id = ${shop}`;
    // Every statement the control plane sends, whoever sends it.
    (cp.db.sql.options as { debug: unknown }).debug = () => {
      queries++;
    };
  });
  after(async () => {
    (cp.db.sql.options as { debug: unknown }).debug = false;
    await cp.stop();
  });

  it('answers 304 to the ETag or the Last-Modified it sent, for the page and its fragment', async () => {
    const p = await page('Validators');
    for (const path of [`/status/${p.slug}`, `/status/${p.slug}?fragment=1`]) {
      const first = await get(path);
      assert.equal(first.status, 200);
      const etag = first.headers.get('etag')!;
      const lastModified = first.headers.get('last-modified')!;
      assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
      assert.match(first.headers.get('cache-control')!, /^public, max-age=\d+, stale-while-revalidate=\d+$/);
      assert.equal((await get(path, { 'if-none-match': etag })).status, 304);
      assert.equal((await get(path, { 'if-none-match': `"other", ${etag}` })).status, 304);
      assert.equal((await get(path, { 'if-none-match': '"other"' })).status, 200);
      assert.equal((await get(path, { 'if-modified-since': lastModified })).status, 304);
      assert.equal((await get(path, { 'if-modified-since': new Date(Date.parse(lastModified) - 1000).toUTCString() })).status, 200);
      // If-None-Match decides when both are sent.
      assert.equal((await get(path, { 'if-none-match': '"other"', 'if-modified-since': lastModified })).status, 200);
    }
    // The same content in the other encoding is not modified either.
    const plain = await rawGet(`/status/${p.slug}`, { 'accept-encoding': 'identity' });
    const zipped = await rawGet(`/status/${p.slug}`, { 'accept-encoding': 'gzip, br' });
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.equal(zipped.headers['vary'], 'accept-encoding');
    assert.equal(gunzipSync(zipped.body).toString(), plain.body.toString());
    assert.notEqual(plain.headers['etag'], zipped.headers['etag'], 'a strong validator names the bytes sent');
    assert.equal(
      (await rawGet(`/status/${p.slug}`, { 'accept-encoding': 'identity', 'if-none-match': String(zipped.headers['etag']) })).status,
      304,
    );
    const full = await get(`/status/${p.slug}`);
    const fragment = await get(`/status/${p.slug}?fragment=1`);
    assert.notEqual(full.headers.get('etag'), fragment.headers.get('etag'), 'each variant has its own validator');
  });

  it('sends as many queries for a hundred concurrent viewers as for one', async () => {
    const one = await page('One viewer');
    const many = await page('Many viewers');
    const single = await queriesDuring(() => get(`/status/${one.slug}`));
    const hundred = await queriesDuring(() => Promise.all(Array.from({ length: 100 }, () => get(`/status/${many.slug}`))));
    assert.ok(single > 0, 'the first view renders the page');
    assert.equal(hundred, single, 'a hundred viewers of a page not rendered yet share one render');
    const again = await queriesDuring(() => Promise.all(Array.from({ length: 100 }, () => get(`/status/${many.slug}?fragment=1`))));
    assert.equal(again, 0, 'a rendered page is served without the database');
  });

  it('shows a status change at once, well before the maximum age', async () => {
    const p = await page('Changes');
    assert.match((await get(`/status/${p.slug}`)).text, /data-status="up"/);
    // Another process's write (a check result's): the database announces it.
    await cp.db.sql`update monitors set status = 2 where id = ${shop}`;
    const down = await until(`/status/${p.slug}?fragment=1`, /data-status="down"/);
    assert.match(down.text, /data-level="major_outage"/);
    await cp.db.sql`update monitors set status = 1 where id = ${shop}`;
    await until(`/status/${p.slug}`, /data-status="up"/);
  });

  it('shows an edit made through the API at once', async () => {
    const p = await page('Before');
    assert.match((await get(`/status/${p.slug}`)).text, /<h1>Before<\/h1>/);
    assert.equal((await api('PATCH', `/status-pages/${p.id}`, { title: 'After' })).status, 200);
    await until(`/status/${p.slug}`, /<h1>After<\/h1>/);
    assert.equal(
      (await api('PATCH', `/status-pages/${p.id}`, { groups: [{ name: 'Renamed', components: [{ type: 'monitor', id: shop }] }] })).status,
      200,
    );
    await until(`/status/${p.slug}`, /Renamed/);
  });

  it('shows an incident published, updated and resolved at once', async () => {
    const p = await page('Incidents');
    assert.doesNotMatch((await get(`/status/${p.slug}`)).text, /Checkout is slow/);
    const created = await api('POST', `/status-pages/${p.id}/incidents`, {
      title: 'Checkout is slow',
      message: 'Looking into it.',
      published: true,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await until(`/status/${p.slug}`, /Checkout is slow/);
    const incident = created.body.data.id as string;
    const update = await api('POST', `/status-pages/${p.id}/incidents/${incident}/updates`, {
      status: 'identified',
      message: 'A slow query, being fixed.',
    });
    assert.equal(update.status, 201, JSON.stringify(update.body));
    await until(`/status/${p.slug}`, /A slow query, being fixed/);
  });

  it('serves the feeds and the summary from a snapshot of their own, replaced when an incident changes', async () => {
    const lone = await page('Feeds of one reader');
    const p = await page('Feeds');
    const paths = ['feed.atom', 'feed.rss', 'summary.json'].map((f) => `/status/${p.slug}/${f}`);
    const single = await queriesDuring(() => get(`/status/${lone.slug}/summary.json`));
    const readers = await queriesDuring(() => Promise.all(Array.from({ length: 100 }, (_, i) => get(paths[i % 3]!))));
    assert.ok(single > 0, 'the first reader renders them');
    assert.equal(readers, single, 'a hundred readers of the three share one render');
    assert.equal(await queriesDuring(() => get(`/status/${p.slug}/feed.atom`)), 0, 'rendered feeds are served without the database');
    const created = await api('POST', `/status-pages/${p.id}/incidents`, {
      title: 'Feed readers hear of it',
      message: 'Looking into it.',
      published: true,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    for (const path of paths) await until(path, /Feed readers hear of it/);
    // The page's own snapshot is apart: reading the feeds did not render it.
    assert.match((await get(`/status/${p.slug}`)).text, /Feed readers hear of it/);
  });

  it('renders a page again once it is older than the maximum age, serving the old one meanwhile', async () => {
    const p = await page('Aging');
    // The change notice of the page's creation may come after a first view and drop its snapshot.
    // Notices come in commit order: once this later change shows, every earlier one has come.
    assert.equal((await api('PATCH', `/status-pages/${p.id}`, { title: 'Aged' })).status, 200);
    const first = await until(`/status/${p.slug}`, /Aged/);
    const stamp = (text: string) => /Updated ([0-9: -]+) UTC/.exec(text)![1];
    clock.advance(61_000);
    const meanwhile = await get(`/status/${p.slug}`);
    assert.equal(stamp(meanwhile.text), stamp(first.text), 'the old snapshot is served while one render replaces it');
    const later = await until(`/status/${p.slug}`, new RegExp(`Updated (?!${stamp(first.text)})`));
    assert.notEqual(later.headers.get('etag'), first.headers.get('etag'));
  });

  it('answers 404 for a slug that names no page', async () => {
    assert.equal((await get('/status/AAAAAAAAAAAAAAAAAAAAAA')).status, 404);
    assert.equal((await get('/status/short')).status, 404);
  });
});
