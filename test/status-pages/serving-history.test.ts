import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { webClient } from '../web/client.ts';

/**
 * A page's month history and its incidents' own pages come from snapshots as the page does (ADR
 * 0039): keyed by page and month or incident, in a bounded cache that addresses naming nothing
 * cannot fill, and checked against the page's access before anything is served.
 */
describe('serving the history and incident pages of a status page from snapshots', () => {
  const BOUND = 4;
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let shop: string;
  let queries = 0;

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${cp.url}${path}`, { headers }).then(async (r) => ({ status: r.status, headers: r.headers, text: await r.text() }));
  /** A request with the Host header given (fetch would not let a test set it). */
  const atHost = (host: string, path: string) =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }>((resolve, reject) => {
      const req = request(`${cp.url}${path}`, { headers: { host, 'accept-encoding': 'identity' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      });
      req.on('error', reject);
      req.end();
    });
  /** Looks until `path` answers as `pattern` says: the change notification arrives apart from the write. */
  const until = async (path: string, check: (res: { status: number; text: string }) => boolean, what: string) => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const res = await get(path);
      if (check(res)) return res;
      assert.ok(Date.now() < deadline, `${path} never ${what}`);
      await new Promise((r) => setImmediate(r));
    }
  };
  const queriesDuring = async (fn: () => Promise<unknown>) => {
    const before = queries;
    await fn();
    return queries - before;
  };
  /**
   * A page with a published incident, once every change notice of their writing has come (they
   * come in commit order: once a later title shows, the earlier ones are in).
   */
  const pageWithIncident = async (title: string, body: Record<string, unknown> = {}) => {
    const res = await api('POST', '/status-pages', {
      project_id: ada.project_id,
      title,
      groups: [{ name: 'Shop', components: [{ type: 'monitor', id: shop }] }],
      ...body,
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const p = res.body.data as { id: string; slug: string };
    const created = await api('POST', `/status-pages/${p.id}/incidents`, {
      title: `${title} checkout slow`,
      message: 'Looking.',
      published: true,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return { ...p, incident: created.body.data.id as string };
  };
  const settled = async (p: { id: string; slug: string }, title: string) => {
    assert.equal((await api('PATCH', `/status-pages/${p.id}`, { title })).status, 200);
    await until(`/status/${p.slug}`, (r) => r.text.includes(`<h1>${title}</h1>`), `showed ${title}`);
  };

  before(async () => {
    cp = await startTestControlPlane({
      roles: ['api'],
      env: { STATUS_PAGE_MAX_AGE_SECONDS: '60', STATUS_PAGE_CACHE_PAGES: String(BOUND) },
    });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    shop = (await api('POST', '/monitors', { name: 'shop', url: 'https://shop.example', project_id: ada.project_id })).body.data.id;
    (cp.db.sql.options as { debug: unknown }).debug = () => {
      queries++;
    };
  });
  after(async () => {
    (cp.db.sql.options as { debug: unknown }).debug = false;
    await cp.stop();
  });

  it('sends as many queries for a hundred concurrent readers of an incident as for one', async () => {
    const one = await pageWithIncident('One reader');
    const many = await pageWithIncident('Many readers');
    await settled(one, 'One reader.');
    await settled(many, 'Many readers.');
    // Both pages' own snapshots are fresh: only the incidents are rendered below.
    await Promise.all([get(`/status/${one.slug}`), get(`/status/${many.slug}`)]);
    const single = await queriesDuring(() => get(`/status/${one.slug}/incidents/${one.incident}`));
    const path = `/status/${many.slug}/incidents/${many.incident}`;
    const hundred = await queriesDuring(() => Promise.all(Array.from({ length: 100 }, () => get(path))));
    assert.ok(single > 0, 'the first reader renders the incident');
    assert.equal(hundred, single, 'a hundred readers of an incident not rendered yet share one render');
    const again = await queriesDuring(() => Promise.all(Array.from({ length: 100 }, () => get(path))));
    assert.equal(again, 0, 'a rendered incident is served without the database');
    const month = `/status/${many.slug}/history`;
    assert.ok((await queriesDuring(() => get(month))) > 0);
    assert.equal(await queriesDuring(() => Promise.all(Array.from({ length: 100 }, () => get(month)))), 0, 'nor is a rendered month');
  });

  it('shows an update of the incident at once, on its page and in its month', async () => {
    const p = await pageWithIncident('Updates');
    await settled(p, 'Updates.');
    const path = `/status/${p.slug}/incidents/${p.incident}`;
    const month = `/status/${p.slug}/history`;
    assert.match((await get(path)).text, /Looking\./);
    assert.match((await get(month)).text, /Updates checkout slow/);
    assert.equal(await queriesDuring(() => Promise.all([get(path), get(month)])), 0, 'both served from their snapshots');
    const update = await api('POST', `/status-pages/${p.id}/incidents/${p.incident}/updates`, {
      status: 'resolved',
      message: 'A slow query, fixed.',
    });
    assert.equal(update.status, 201, JSON.stringify(update.body));
    await until(path, (r) => r.text.includes('A slow query, fixed.'), 'showed the update');
    await until(month, (r) => r.text.includes('data-incident-status="resolved"'), 'showed the incident resolved');
  });

  it('answers 304 to the validators it sent, with the main page’s caching, at the slug and at the page’s own host name', async () => {
    const p = await pageWithIncident('Validators', { custom_domain: 'status.validators.example' });
    for (const path of [`/status/${p.slug}/incidents/${p.incident}`, `/status/${p.slug}/history`]) {
      const first = await get(path);
      assert.equal(first.status, 200, path);
      const etag = first.headers.get('etag')!;
      assert.match(etag, /^"[A-Za-z0-9_-]+(-gz)?"$/, path);
      assert.match(first.headers.get('cache-control')!, /^public, max-age=\d+, stale-while-revalidate=\d+$/, path);
      assert.equal((await get(path, { 'if-none-match': etag })).status, 304, path);
      assert.equal((await get(path, { 'if-none-match': '"other"' })).status, 200, path);
      assert.equal((await get(path, { 'if-modified-since': first.headers.get('last-modified')! })).status, 304, path);
      const hosted = await atHost('status.validators.example', path);
      assert.equal(hosted.status, 200, path);
      assert.ok(hosted.headers['etag'], path);
    }
  });

  it('never serves a private page’s incident or month from its snapshot to a reader without access', async () => {
    const p = await pageWithIncident('Goes private');
    await settled(p, 'Goes private.');
    const paths = [`/status/${p.slug}/incidents/${p.incident}`, `/status/${p.slug}/history`];
    for (const path of paths) assert.match((await get(path)).text, /Goes private checkout slow/);
    assert.equal((await api('PATCH', `/status-pages/${p.id}`, { password: 'correct horse' })).status, 200);
    for (const path of paths) {
      const res = await until(path, (r) => r.status === 401, 'asked for the password');
      assert.doesNotMatch(res.text, /checkout slow/, path);
      assert.equal(res.headers.get('cache-control'), 'private, no-store', path);
    }
    const reader = webClient(cp.url);
    await reader.post(`/status/${p.slug}/access`, { password: 'correct horse', next: `/status/${p.slug}` });
    for (const path of paths) {
      const res = await reader.get(path);
      assert.equal(res.status, 200, path);
      assert.match(res.text, /Goes private checkout slow/, path);
      assert.equal(res.headers.get('cache-control'), 'private, no-store', path);
      assert.equal(res.headers.get('etag'), null, path);
      // The reader's render is in the cache now; a stranger still gets none of it.
      const stranger = await get(path);
      assert.equal(stranger.status, 401, path);
      assert.doesNotMatch(stranger.text, /checkout slow/, path);
    }
  });

  it('keeps at most its bound of months, and no place for incidents or months that do not exist', async () => {
    const p = await pageWithIncident('Bounded');
    await settled(p, 'Bounded.');
    const incident = `/status/${p.slug}/incidents/${p.incident}`;
    assert.equal((await get(incident)).status, 200);
    assert.equal(await queriesDuring(() => get(incident)), 0, 'kept');
    const unknown = Array.from(
      { length: 50 },
      (_, i) => `/status/${p.slug}/incidents/00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    );
    for (const res of await Promise.all(unknown.map((path) => get(path)))) {
      assert.equal(res.status, 404);
      assert.match(res.text, /no such incident/);
    }
    assert.equal(await queriesDuring(() => get(incident)), 0, 'fifty unknown incidents did not push the known one out');
    const ahead = await get(`/status/${p.slug}/history?month=2999-01`);
    assert.equal(ahead.status, 404, 'a month that has not begun has no history');

    const month = `/status/${p.slug}/history?month=2020-01`;
    assert.equal((await get(month)).status, 200);
    assert.equal(await queriesDuring(() => get(month)), 0, 'kept');
    const others = Array.from(
      { length: 30 },
      (_, i) => `/status/${p.slug}/history?month=${2021 + Math.floor(i / 12)}-${String((i % 12) + 1).padStart(2, '0')}`,
    );
    for (const path of others) assert.equal((await get(path)).status, 200);
    assert.ok((await queriesDuring(() => get(month))) > 0, `only the ${BOUND} months read last are kept`);
    const last = others.at(-1)!;
    assert.equal(await queriesDuring(() => get(last)), 0, 'the last month read is still kept');
  });
});
