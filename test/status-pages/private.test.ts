import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { apiClient, assertInvalid, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { webClient, type WebClient } from '../web/client.ts';

/** Private status pages (ADR 0041): a password, an allow-list of client addresses, and every address of a page gated alike. */
describe('private status pages', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let shop: string;

  const page = async (body: Record<string, unknown>) => {
    const res = await api('POST', '/status-pages', {
      project_id: ada.project_id,
      title: 'Acme internal',
      groups: [{ name: 'Storefront', components: [{ type: 'monitor', id: shop, display_name: 'Web shop' }] }],
      ...body,
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data as { id: string; slug: string; password_protected: boolean; ip_allowlist: string[] };
  };
  /** Every public address of a page, the incident's when it has one. */
  const addresses = (slug: string, incident?: string) => [
    `/status/${slug}`,
    `/status/${slug}?fragment=1`,
    `/status/${slug}/history`,
    ...(incident ? [`/status/${slug}/incidents/${incident}`] : []),
    `/status/${slug}/feed.atom`,
    `/status/${slug}/feed.rss`,
    `/status/${slug}/summary.json`,
    `/status/${slug}/badge/${shop}/status.svg`,
    `/status/${slug}/badge/${shop}/uptime.json`,
  ];
  const publishedIncident = async (pageId: string) => {
    const res = await api('POST', `/status-pages/${pageId}/incidents`, { title: 'Checkout slow', message: 'Looking.', published: true });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data.id as string;
  };
  const givePassword = (client: WebClient, slug: string, password: string, next = `/status/${slug}`) =>
    client.post(`/status/${slug}/access`, { password, next });
  /** A request with the Host header given (fetch would not let a test set it). */
  const atHost = (host: string, path: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }>((resolve, reject) => {
      const req = request(`${cp.url}${path}`, { headers: { host, ...headers } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      });
      req.on('error', reject);
      req.end();
    });

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    shop = (await api('POST', '/monitors', { name: 'shop', url: 'https://shop.example', project_id: ada.project_id })).body.data.id;
    await cp.db.sql`update monitors set status = 1`;
  });
  after(() => cp.stop());

  it('takes a password and an allow-list, never returns the password, and names the field it refuses', async () => {
    const p = await page({ password: 'correct horse', ip_allowlist: ['203.0.113.0/24', '2001:DB8::/32', ' 198.51.100.7 '] });
    assert.equal(p.password_protected, true);
    assert.deepEqual(p.ip_allowlist, ['203.0.113.0/24', '2001:db8::/32', '198.51.100.7']);
    const got = await api('GET', `/status-pages/${p.id}`);
    assert.equal(got.body.data.password_protected, true);
    assert.ok(!('password' in got.body.data) && !('password_hash' in got.body.data));
    assert.doesNotMatch(JSON.stringify(got.body), /correct horse|scrypt/);
    const [stored] = await cp.db.sql<{ password_hash: string }[]>`select password_hash from status_pages where id = ${p.id}`;
    assert.match(stored!.password_hash, /^scrypt\$/, 'hashed as users’ passwords are');

    assertInvalid(await api('PATCH', `/status-pages/${p.id}`, { password: 'short' }), ['password']);
    assertInvalid(await api('PATCH', `/status-pages/${p.id}`, { ip_allowlist: ['10.0.0.0/8', 'not an address'] }), ['ip_allowlist.1']);
    for (const bad of ['10.0.0.0/33', '::1/129', '10.0.0.1/8/1', '10.0.0.256', 'example.com', '10.0.0.0/-1', '']) {
      const res = await api('PATCH', `/status-pages/${p.id}`, { ip_allowlist: [bad] });
      assertInvalid(res, ['ip_allowlist.0']);
    }
    const tooMany = Array.from({ length: 101 }, (_, i) => `10.0.${i}.1`);
    assertInvalid(await api('PATCH', `/status-pages/${p.id}`, { ip_allowlist: tooMany }), ['ip_allowlist']);
    assert.equal((await api('PATCH', `/status-pages/${p.id}`, { ip_allowlist: tooMany.slice(0, 100) })).status, 200);

    const kept = await api('PATCH', `/status-pages/${p.id}`, { title: 'Renamed' });
    assert.equal(kept.body.data.password_protected, true, 'a PATCH without the field keeps it');
    const cleared = await api('PATCH', `/status-pages/${p.id}`, { password: null, ip_allowlist: [] });
    assert.equal(cleared.status, 200);
    assert.equal(cleared.body.data.password_protected, false);
    assert.deepEqual(cleared.body.data.ip_allowlist, []);
    const [row] = await cp.db.sql`select password_hash, ip_allowlist from status_pages where id = ${p.id}`;
    assert.deepEqual({ ...row }, { password_hash: null, ip_allowlist: null });
  });

  it('asks for the password at every address of the page, and never lets a shared cache keep the answer', async () => {
    const p = await page({ password: 'correct horse', custom_domain: 'private.acme.example' });
    const incident = await publishedIncident(p.id);
    const visitor = webClient(cp.url);
    for (const path of addresses(p.slug, incident)) {
      const res = await visitor.get(path);
      assert.equal(res.status, 401, path);
      assert.equal(res.headers.get('cache-control'), 'private, no-store', path);
      assert.equal(res.headers.get('etag'), null, path);
      assert.doesNotMatch(res.text, /Web shop|Checkout slow/, `${path} shows nothing of the page`);
    }
    const form = await visitor.get(`/status/${p.slug}/history`);
    assert.match(form.text, new RegExp(`<form method="post" action="/status/${p.slug}/access"`));
    assert.match(form.text, new RegExp(`name="next" value="/status/${p.slug}/history"`));
    assert.match(form.text, /type="password"/);
    for (const path of ['/', '/feed.atom', '/summary.json']) {
      const res = await atHost('private.acme.example', path);
      assert.equal(res.status, 401, `${path} at the page's host name`);
      assert.equal(res.headers['cache-control'], 'private, no-store');
    }
  });

  it('refuses a wrong password, lets the right one in for a day through a signed cookie, and voids it when the password changes', async () => {
    const p = await page({ password: 'correct horse' });
    const incident = await publishedIncident(p.id);
    const reader = webClient(cp.url, { localAddress: '127.0.0.4' });
    const wrong = await givePassword(reader, p.slug, 'battery staple');
    assert.equal(wrong.status, 401);
    assert.match(wrong.text, /Wrong password/);
    assert.equal(wrong.setCookies.length, 0);
    assert.equal(wrong.headers.get('cache-control'), 'private, no-store');

    const right = await givePassword(reader, p.slug, 'correct horse', `/status/${p.slug}/feed.atom`);
    assert.equal(right.status, 303);
    assert.equal(right.location, `/status/${p.slug}/feed.atom`, 'back where the reader was going');
    const cookie = right.setCookies.find((c) => c.startsWith('uptime_status_access='))!;
    assert.ok(cookie, right.setCookies.join());
    assert.match(cookie, /; HttpOnly/i);
    assert.match(cookie, /; SameSite=Lax/i);
    assert.match(cookie, new RegExp(`; Path=/status/${p.slug}(;|$)`));
    assert.match(cookie, /; Max-Age=86400/);
    assert.doesNotMatch(cookie, /; Secure/i, 'plain http: not Secure');

    for (const path of addresses(p.slug, incident)) {
      const res = await reader.get(path);
      assert.equal(res.status, 200, `${path}: ${res.text.slice(0, 200)}`);
      assert.equal(res.headers.get('cache-control'), 'private, no-store', path);
      assert.equal(res.headers.get('etag'), null, `${path}: no validator`);
    }
    assert.match((await reader.get(`/status/${p.slug}`)).text, /Web shop/);

    // A cookie is the page's own: another private page does not take it.
    const other = await page({ password: 'correct horse' });
    const value = reader.jar.get('uptime_status_access')!;
    const replayed = await webClient(cp.url).get(`/status/${other.slug}`, { cookie: `uptime_status_access=${value}` });
    assert.equal(replayed.status, 401);
    // Nor does a forged or expired one.
    const [until, sig] = value.split('.');
    for (const forged of [`${Number(until) + 1}.${sig}`, `${until}.${'A'.repeat(43)}`, 'garbage', `100.${sig}`]) {
      const res = await webClient(cp.url).get(`/status/${p.slug}`, { cookie: `uptime_status_access=${forged}` });
      assert.equal(res.status, 401, forged);
    }

    // Changing the password (even to the same words) voids every cookie given before.
    assert.equal((await api('PATCH', `/status-pages/${p.id}`, { password: 'correct horse' })).status, 200);
    const after = await reader.get(`/status/${p.slug}`);
    assert.equal(after.status, 401, 'the old cookie is refused');
    // Removing it opens the page to everyone, as a public page again.
    assert.equal((await api('PATCH', `/status-pages/${p.id}`, { password: null })).status, 200);
    const open = await webClient(cp.url).get(`/status/${p.slug}`);
    assert.equal(open.status, 200);
    assert.match(open.headers.get('cache-control')!, /^public/);
  });

  it('throttles guesses per address as sign-in does, whatever the password', async () => {
    const p = await page({ password: 'correct horse' });
    const guesser = webClient(cp.url, { localAddress: '127.0.0.5' });
    for (let i = 0; i < 5; i++) assert.equal((await givePassword(guesser, p.slug, `guess ${i}`)).status, 401, `guess ${i}`);
    const limited = await givePassword(guesser, p.slug, 'correct horse');
    assert.equal(limited.status, 429);
    assert.match(limited.text, /Too many attempts/);
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    assert.equal(limited.setCookies.length, 0);
    // Another address is not slowed by this one's guesses.
    const elsewhere = await givePassword(webClient(cp.url, { localAddress: '127.0.0.6' }), p.slug, 'correct horse');
    assert.equal(elsewhere.status, 303);
  });

  it('answers only the addresses on its allow-list, at every address of the page', async () => {
    const p = await page({ ip_allowlist: ['127.0.0.2', '10.0.0.0/8'] });
    const incident = await publishedIncident(p.id);
    const outside = webClient(cp.url, { localAddress: '127.0.0.1' });
    const inside = webClient(cp.url, { localAddress: '127.0.0.2' });
    for (const path of addresses(p.slug, incident)) {
      const refused = await outside.get(path);
      assert.equal(refused.status, 403, path);
      assert.equal(refused.headers.get('cache-control'), 'private, no-store', path);
      assert.doesNotMatch(refused.text, /Web shop|Checkout slow/);
      const allowed = await inside.get(path);
      assert.equal(allowed.status, 200, `${path}: ${allowed.text.slice(0, 200)}`);
      assert.equal(allowed.headers.get('cache-control'), 'private, no-store', path);
    }
    assert.equal((await outside.post(`/status/${p.slug}/access`, { password: 'x' })).status, 403);
    // Without TRUST_PROXY a forwarded address is nobody's word.
    assert.equal((await outside.get(`/status/${p.slug}`, { 'x-forwarded-for': '127.0.0.2' })).status, 403);

    // With a password too: the address first, then the password.
    await api('PATCH', `/status-pages/${p.id}`, { password: 'correct horse' });
    assert.equal((await outside.get(`/status/${p.slug}`)).status, 403);
    assert.equal((await inside.get(`/status/${p.slug}`)).status, 401);
    assert.equal((await givePassword(outside, p.slug, 'correct horse')).status, 403, 'the right password does not open it elsewhere');
    assert.equal((await givePassword(inside, p.slug, 'correct horse')).status, 303);
    assert.equal((await inside.get(`/status/${p.slug}`)).status, 200);
  });

  it('sets the cookie for the whole host at the page’s own host name', async () => {
    const p = await page({ password: 'correct horse', custom_domain: 'secret.acme.example' });
    const res = await new Promise<{ status: number; headers: Record<string, string | string[] | undefined> }>((resolve, reject) => {
      const req = request(
        `${cp.url}/status/${p.slug}/access`,
        { method: 'POST', headers: { host: 'secret.acme.example', 'content-type': 'application/x-www-form-urlencoded' } },
        (r) => {
          r.resume();
          r.on('end', () => resolve({ status: r.statusCode!, headers: r.headers }));
        },
      );
      req.on('error', reject);
      req.end('password=correct+horse&next=%2Ffeed.atom');
    });
    assert.equal(res.status, 303);
    assert.equal(res.headers['location'], '/feed.atom');
    const cookie = (res.headers['set-cookie'] ?? [])[0]!;
    assert.match(cookie, /; Path=\/(;|$)/);
    const pair = cookie.split(';')[0]!;
    const feed = await atHost('secret.acme.example', '/feed.atom', { cookie: pair });
    assert.equal(feed.status, 200);
    assert.equal(feed.headers['cache-control'], 'private, no-store');
  });

  it('sends a visitor somewhere of this page only after the password', async () => {
    const p = await page({ password: 'correct horse' });
    for (const next of ['https://evil.example/', '//evil.example/x', '/app/monitors', `/status/${p.slug}/../../app`, '/status/other']) {
      const res = await givePassword(webClient(cp.url, { localAddress: '127.0.0.7' }), p.slug, 'correct horse', next);
      assert.equal(res.status, 303, next);
      assert.equal(res.location, `/status/${p.slug}`, next);
    }
    assert.equal((await webClient(cp.url).post('/status/AAAAAAAAAAAAAAAAAAAAAA/access', { password: 'x' })).status, 404);
  });

  it('leaves public pages public', async () => {
    const p = await page({});
    const res = await webClient(cp.url).get(`/status/${p.slug}`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('cache-control')!, /^public, max-age=/);
    assert.ok(res.headers.get('etag'));
    const posted = await givePassword(webClient(cp.url), p.slug, 'anything');
    assert.equal(posted.status, 303, 'a public page needs no password');
  });
});

/** Behind a trusted reverse proxy: the client address and the scheme are the proxy's word, as everywhere in the app. */
describe('private status pages behind a trusted proxy', () => {
  let cp: TestControlPlane;
  let api: Call;
  let ada: TestAccount;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'], env: { TRUST_PROXY: '127.0.0.1' } });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
  });
  after(() => cp.stop());

  it('matches the allow-list against the forwarded address, and sets a Secure cookie for a request that came over https', async () => {
    const res = await api('POST', '/status-pages', {
      project_id: ada.project_id,
      title: 'Behind a proxy',
      ip_allowlist: ['198.51.100.0/24'],
      password: 'correct horse',
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const slug = res.body.data.slug as string;
    const proxy = webClient(cp.url);
    assert.equal((await proxy.get(`/status/${slug}`)).status, 403, 'the proxy itself is not on the list');
    assert.equal((await proxy.get(`/status/${slug}`, { 'x-forwarded-for': '203.0.113.9' })).status, 403);
    assert.equal((await proxy.get(`/status/${slug}`, { 'x-forwarded-for': '198.51.100.7' })).status, 401);
    const given = await proxy.post(
      `/status/${slug}/access`,
      { password: 'correct horse' },
      { 'x-forwarded-for': '198.51.100.7', 'x-forwarded-proto': 'https' },
    );
    assert.equal(given.status, 303);
    assert.match(given.setCookies[0]!, /; Secure/i);
    const pair = given.setCookies[0]!.split(';')[0]!;
    const seen = await webClient(cp.url).get(`/status/${slug}`, { 'x-forwarded-for': '198.51.100.7', cookie: pair });
    assert.equal(seen.status, 200);
    assert.equal(seen.headers.get('cache-control'), 'private, no-store');
  });
});
