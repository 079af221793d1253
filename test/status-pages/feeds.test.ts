import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { SaxesParser } from 'saxes';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { manualClock, type ManualClock } from '../heartbeats/manual-clock.ts';
import type { IncidentImpact } from '../../control-plane/src/status-pages/overall.ts';
import type { StatusPageComponent } from '../../control-plane/src/status-pages/schemas.ts';
import { componentStatus, componentText } from '../../control-plane/src/status-pages/summary.ts';
import { seedIncident } from '../web/seed.ts';

/** An element of a parsed document: its name, attributes, text and children. */
interface Node {
  name: string;
  attributes: Record<string, string>;
  text: string;
  children: Node[];
}

/** The document parsed by a conforming XML parser, which throws on anything not well formed. */
function parseXml(text: string): Node {
  const parser = new SaxesParser();
  const root: Node = { name: '#document', attributes: {}, text: '', children: [] };
  const stack = [root];
  parser.on('opentag', (tag) => {
    const node: Node = { name: tag.name, attributes: tag.attributes as Record<string, string>, text: '', children: [] };
    stack.at(-1)!.children.push(node);
    stack.push(node);
  });
  parser.on('text', (t) => (stack.at(-1)!.text += t));
  parser.on('closetag', () => stack.pop());
  parser.write(text).close();
  assert.equal(root.children.length, 1, 'one root element');
  return root.children[0]!;
}

const child = (n: Node, name: string) => n.children.find((c) => c.name === name);
const children = (n: Node, name: string) => n.children.filter((c) => c.name === name);
const textOf = (n: Node, name: string) => child(n, name)?.text;

/** The characters a hostile writer may put in a title: markup, the end of a CDATA section, entities and control characters. */
const HOSTILE = 'Checkout <script>alert("x")</script> ]]> &amp; & \'q\' \u0001\u0008\u001b\u007f end';

/** A status page's Atom and RSS feeds and its JSON summary (docs/status-pages.md, "Feeds and the JSON summary"). */
describe('status page feeds and the JSON summary', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let clock: ManualClock;
  let shop: string;
  let internal: string;
  let nightly: string;

  type Got = { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer; text: string };
  /** A request with the headers given, Host included, and the bytes as sent (no inflating). */
  const get = (path: string, headers: Record<string, string> = {}) =>
    new Promise<Got>((resolve, reject) => {
      const req = request(`${cp.url}${path}`, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode!, headers: res.headers, body, text: body.toString('utf8') });
        });
      });
      req.on('error', reject);
      req.end();
    });
  const ok = async (path: string, headers: Record<string, string> = {}) => {
    const res = await get(path, headers);
    assert.equal(res.status, 200, `${path}: ${res.text.slice(0, 300)}`);
    return res;
  };
  const page = async (body: Record<string, unknown> = {}) => {
    const res = await api('POST', '/status-pages', {
      project_id: ada.project_id,
      title: 'Acme',
      groups: [
        { name: 'Storefront', components: [{ type: 'monitor', id: shop, display_name: 'Web shop', description: 'Browsing and checkout' }] },
        { name: 'Jobs', components: [{ type: 'heartbeat', id: nightly }] },
      ],
      ...body,
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data as { id: string; slug: string; project_id: string };
  };
  const incident = async (pageId: string, body: Record<string, unknown>) => {
    const res = await api('POST', `/status-pages/${pageId}/incidents`, { message: 'We are looking into it.', published: true, ...body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    clock.advance(60_000);
    return res.body.data as { id: string };
  };
  const atomEntries = async (path: string) => children(parseXml((await ok(path)).text), 'entry');

  before(async () => {
    clock = manualClock(Date.parse('2026-11-20T10:00:00Z'));
    cp = await startTestControlPlane({ roles: ['api'], clock });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    const monitor = async (name: string) =>
      (await api('POST', '/monitors', { name, url: 'https://secret-internal.example/health?key=k-123', project_id: ada.project_id })).body
        .data.id as string;
    shop = await monitor('shop-prod-eu');
    internal = await monitor('Internal admin');
    nightly = (await api('POST', '/heartbeats', { name: 'nightly-backup', project_id: ada.project_id })).body.data.id;
    await cp.db.sql`update monitors set status = 1`;
    await cp.db.sql`update heartbeats set status = 'up' where id = ${nightly}`;
  });
  after(() => cp.stop());

  it('lists the published incidents newest first, each with its link, dates, impact, components and timeline; never a draft', async () => {
    const p = await page();
    const first = await incident(p.id, { title: 'Checkout slow', impact: 'minor', components: [{ type: 'monitor', id: shop }] });
    const update = await api('POST', `/status-pages/${p.id}/incidents/${first.id}/updates`, {
      status: 'resolved',
      message: 'Fixed: **all good**.',
    });
    assert.equal(update.status, 201);
    clock.advance(60_000);
    await incident(p.id, { title: 'Draft never shown', published: false });
    const second = await incident(p.id, {
      title: 'Backups late',
      impact: 'major',
      components: [{ type: 'heartbeat', id: nightly }],
    });

    const feed = parseXml((await ok(`/status/${p.slug}/feed.atom`)).text);
    assert.equal(feed.name, 'feed');
    assert.equal(feed.attributes['xmlns'], 'http://www.w3.org/2005/Atom');
    assert.equal(textOf(feed, 'title'), 'Acme status');
    const entries = children(feed, 'entry');
    assert.deepEqual(
      entries.map((e) => textOf(e, 'title')),
      ['Backups late', 'Checkout slow'],
      'published incidents, newest first, no draft',
    );
    const [late, slow] = entries as [Node, Node];
    assert.equal(textOf(slow, 'id'), `urn:uuid:${first.id}`);
    assert.equal(child(slow, 'link')!.attributes['href'], `${cp.config.PUBLIC_URL}/status/${p.slug}/incidents/${first.id}`);
    assert.equal(textOf(slow, 'published'), '2026-11-20T10:00:00.000000Z');
    assert.equal(textOf(slow, 'updated'), '2026-11-20T10:01:00.000000Z', 'updated: its latest update');
    assert.equal(child(slow, 'category')!.attributes['term'], 'minor');
    const content = child(slow, 'content')!;
    assert.equal(content.attributes['type'], 'html');
    assert.match(content.text, /<strong>Resolved<\/strong> · Minor impact · Affects Web shop/);
    assert.match(content.text, /Fixed: <strong>all good<\/strong>\./, 'the Markdown as the incident page renders it');
    assert.ok(content.text.indexOf('Fixed') < content.text.indexOf('We are looking into it.'), 'timeline newest first');
    assert.match(child(late, 'content')!.text, /Affects nightly-backup/);
    assert.equal(textOf(feed, 'updated'), textOf(late, 'updated'), 'the feed is as new as its newest entry');
    assert.equal(child(feed, 'link')!.attributes['href'], `${cp.config.PUBLIC_URL}/status/${p.slug}/feed.atom`);

    const rss = parseXml((await ok(`/status/${p.slug}/feed.rss`)).text);
    assert.equal(rss.name, 'rss');
    assert.equal(rss.attributes['version'], '2.0');
    const channel = child(rss, 'channel')!;
    assert.equal(textOf(channel, 'link'), `${cp.config.PUBLIC_URL}/status/${p.slug}`);
    const items = children(channel, 'item');
    assert.deepEqual(
      items.map((i) => textOf(i, 'title')),
      ['Backups late', 'Checkout slow'],
    );
    assert.equal(textOf(items[0]!, 'guid'), `urn:uuid:${second.id}`);
    assert.equal(textOf(items[1]!, 'pubDate'), 'Fri, 20 Nov 2026 10:00:00 GMT');
    assert.match(textOf(items[1]!, 'description')!, /Fixed: <strong>all good<\/strong>/);
  });

  it('answers with the content types and validators of the snapshot machinery, gzipped on request, readable by other sites', async () => {
    const p = await page();
    await incident(p.id, { title: 'Slow search' });
    for (const [path, type] of [
      ['feed.atom', 'application/atom+xml; charset=utf-8'],
      ['feed.rss', 'application/rss+xml; charset=utf-8'],
      ['summary.json', 'application/json; charset=utf-8'],
    ] as const) {
      const url = `/status/${p.slug}/${path}`;
      const plain = await ok(url);
      assert.equal(plain.headers['content-type'], type, path);
      assert.equal(plain.headers['access-control-allow-origin'], '*', path);
      assert.match(String(plain.headers['cache-control']), /^public, max-age=\d+, stale-while-revalidate=\d+$/);
      assert.equal(plain.headers['vary'], 'accept-encoding');
      const etag = String(plain.headers['etag']);
      assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
      const lastModified = String(plain.headers['last-modified']);
      const again = await get(url, { 'if-none-match': etag });
      assert.equal(again.status, 304, path);
      assert.equal(again.body.length, 0);
      assert.equal((await get(url, { 'if-modified-since': lastModified })).status, 304, path);
      assert.equal((await get(url, { 'if-none-match': '"other"' })).status, 200, path);
      const zipped = await ok(url, { 'accept-encoding': 'gzip' });
      assert.equal(zipped.headers['content-encoding'], 'gzip');
      assert.equal(gunzipSync(zipped.body).toString(), plain.text, path);
      assert.equal((await get(url, { 'if-none-match': String(zipped.headers['etag']) })).status, 304, 'either encoding’s tag');
    }
    // A new update changes the feed, and so its validator.
    const before = String((await ok(`/status/${p.slug}/feed.atom`)).headers['etag']);
    await incident(p.id, { title: 'Another one' });
    const after = await get(`/status/${p.slug}/feed.atom`, { 'if-none-match': before });
    assert.equal(after.status, 200);
    assert.match(after.text, /Another one/);
  });

  it('holds the last 50 published incidents', async () => {
    const p = await page();
    await cp.db.sql`
      insert into status_page_incidents (status_page_id, title, impact, status, published_at, created_at, updated_at)
      select ${p.id}, 'Incident ' || n, 'minor', 'investigating', now(), timestamptz '2026-10-01T00:00:00Z' + make_interval(hours => n),
        timestamptz '2026-10-01T00:00:00Z' + make_interval(hours => n)
      from generate_series(1, 60) as n`;
    const entries = await atomEntries(`/status/${p.slug}/feed.atom`);
    assert.equal(entries.length, 50);
    assert.equal(textOf(entries[0]!, 'title'), 'Incident 60');
    assert.equal(textOf(entries[49]!, 'title'), 'Incident 11');
    const items = children(child(parseXml((await ok(`/status/${p.slug}/feed.rss`)).text), 'channel')!, 'item');
    assert.equal(items.length, 50);
  });

  it('stays well formed whatever the titles and messages hold, and keeps them as text', async () => {
    const p = await page({ title: 'Acme <b>bold</b> & ]]> \u0002', description: 'Ours & yours <i>' });
    const i = await incident(p.id, {
      title: 'placeholder',
      message: '<script>alert(1)</script> ]]> &amp; [x](javascript:alert(1)) \u0003 <img src=x onerror=alert(2)>',
    });
    // Whatever the API lets through, the database can hold more: every character but NUL.
    await cp.db.sql`update status_page_incidents set title = ${HOSTILE} where id = ${i.id}`;
    await cp.db.sql`update status_page_incident_updates set message = message || ${'\u0010 \ud800 lone'} where incident_id = ${i.id}`;
    const atom = parseXml((await ok(`/status/${p.slug}/feed.atom`)).text);
    assert.equal(textOf(atom, 'title'), 'Acme <b>bold</b> & ]]>  status', 'the title as text, without the control character');
    assert.equal(textOf(atom, 'subtitle'), 'Ours & yours <i>');
    const entry = children(atom, 'entry')[0]!;
    assert.equal(
      textOf(entry, 'title'),
      'Checkout <script>alert("x")</script> ]]> &amp; & \'q\' \u007f end',
      'DEL is a character of XML 1.0',
    );
    const html = child(entry, 'content')!.text;
    assert.doesNotMatch(html, /<script|<img|href="javascript/i, 'the Markdown made safe as on the page');
    assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/, 'HTML in a message is text');
    assert.match(html, /\]\]&gt;/);
    const rss = parseXml((await ok(`/status/${p.slug}/feed.rss`)).text);
    const item = children(child(rss, 'channel')!, 'item')[0]!;
    assert.equal(textOf(item, 'title'), textOf(entry, 'title'));
    const summary = JSON.parse((await ok(`/status/${p.slug}/summary.json`)).text);
    assert.equal(summary.incidents[0].title, HOSTILE, 'JSON keeps every character, escaped as JSON does');
    assert.equal(summary.page.title, 'Acme <b>bold</b> & ]]> \u0002');
  });

  it('summarises the page: banner, components with their status, ongoing published incidents, maintenance', async () => {
    const p = await page({ description: 'Our public services.' });
    await incident(p.id, { title: 'Old and done', status: 'resolved' });
    const ongoing = await incident(p.id, {
      title: 'Backups late',
      impact: 'major',
      status: 'identified',
      components: [{ type: 'heartbeat', id: nightly }],
    });
    await incident(p.id, { title: 'A draft', published: false, impact: 'critical', components: [{ type: 'monitor', id: shop }] });
    const w = await api('POST', '/maintenance-windows', {
      project_id: ada.project_id,
      name: 'Database upgrade',
      description: 'Read-only for a while.',
      starts_at: new Date(clock.now() + 3_600_000).toISOString(),
      ends_at: new Date(clock.now() + 7_200_000).toISOString(),
      monitor_ids: [shop],
    });
    assert.equal(w.status, 201, JSON.stringify(w.body));
    const res = await ok(`/status/${p.slug}/summary.json`);
    const s = JSON.parse(res.text);
    assert.deepEqual(Object.keys(s), ['page', 'status', 'components', 'incidents', 'maintenance']);
    assert.deepEqual(s.page, {
      title: 'Acme',
      description: 'Our public services.',
      url: `${cp.config.PUBLIC_URL}/status/${p.slug}`,
      updated_at: new Date(clock.now()).toISOString().replace('Z', '000Z'),
    });
    assert.deepEqual(
      s.status,
      { level: 'partial_outage', text: 'Partial outage' },
      'a major incident raises the banner; the draft does not',
    );
    assert.deepEqual(s.components, [
      {
        name: 'Web shop',
        description: 'Browsing and checkout',
        group: 'Storefront',
        type: 'monitor',
        status: 'operational',
        text: 'Up',
      },
      { name: 'nightly-backup', description: '', group: 'Jobs', type: 'heartbeat', status: 'partial_outage', text: 'Up' },
    ]);
    assert.equal(s.incidents.length, 1, 'ongoing and published only');
    assert.deepEqual(s.incidents[0], {
      id: ongoing.id,
      title: 'Backups late',
      impact: 'major',
      status: 'identified',
      started_at: s.incidents[0].started_at,
      updated_at: s.incidents[0].started_at,
      url: `${cp.config.PUBLIC_URL}/status/${p.slug}/incidents/${ongoing.id}`,
      components: ['nightly-backup'],
    });
    assert.deepEqual(s.maintenance, [
      {
        name: 'Database upgrade',
        description: 'Read-only for a while.',
        starts_at: s.maintenance[0].starts_at,
        ends_at: s.maintenance[0].ends_at,
        in_progress: false,
        components: ['Web shop'],
      },
    ]);
    assert.equal(Date.parse(s.maintenance[0].starts_at), clock.now() + 3_600_000);

    // The feeds announce the maintenance too, ahead of the incidents.
    const entries = await atomEntries(`/status/${p.slug}/feed.atom`);
    assert.equal(textOf(entries[0]!, 'title'), 'Scheduled maintenance: Database upgrade');
    assert.equal(child(entries[0]!, 'category')!.attributes['term'], 'maintenance');
    assert.match(child(entries[0]!, 'content')!.text, /Covers Web shop[^]*Read-only for a while\./);
    assert.deepEqual(
      entries.slice(1).map((e) => textOf(e, 'title')),
      ['Backups late', 'Old and done'],
    );
    await api('DELETE', `/maintenance-windows/${w.body.data.id}`);
  });

  it('maps each state to the documented component status', async () => {
    const component = (type: 'monitor' | 'heartbeat', status: number | string, in_maintenance = false) =>
      ({ type, id: shop, name: 'x', display_name: null, description: '', status, in_maintenance }) as StatusPageComponent;
    const cases: [StatusPageComponent, IncidentImpact[], string, string][] = [
      [component('monitor', 1), [], 'operational', 'Up'],
      [component('monitor', 2), [], 'major_outage', 'Down'],
      [component('monitor', 4), [], 'degraded', 'Degraded'],
      [component('monitor', 3), [], 'operational', 'Paused'],
      [component('monitor', 0), [], 'operational', 'Pending'],
      [component('monitor', 2, true), [], 'maintenance', 'Maintenance'],
      [component('heartbeat', 'up'), [], 'operational', 'Up'],
      [component('heartbeat', 'running'), [], 'operational', 'Running'],
      [component('heartbeat', 'late'), [], 'degraded', 'Late'],
      [component('heartbeat', 'down'), [], 'major_outage', 'Down'],
      [component('heartbeat', 'new'), [], 'operational', 'New'],
      [component('heartbeat', 'paused'), [], 'operational', 'Paused'],
      [component('monitor', 1), ['none'], 'operational', 'Up'],
      [component('monitor', 1), ['minor'], 'degraded', 'Up'],
      [component('monitor', 1), ['minor', 'major'], 'partial_outage', 'Up'],
      [component('monitor', 4), ['critical'], 'major_outage', 'Degraded'],
      [component('monitor', 2), ['minor'], 'major_outage', 'Down'],
      [component('heartbeat', 'up', true), ['minor'], 'degraded', 'Maintenance'],
    ];
    for (const [c, impacts, status, text] of cases) {
      assert.deepEqual([componentStatus(c, impacts), componentText(c)], [status, text], `${c.type} ${c.status} ${impacts}`);
    }
    // Through the page: a degraded monitor, maintenance covering the heartbeat, an incident naming the monitor.
    const p = await page();
    await cp.db.sql`update monitors set degraded_regions = ${cp.db.sql.array(['eu-west'])} where id = ${shop}`;
    const before = JSON.parse((await ok(`/status/${p.slug}/summary.json`)).text);
    assert.deepEqual([before.components[0].status, before.components[0].text], ['degraded', 'Degraded']);
    await cp.db.sql`update monitors set degraded_regions = null where id = ${shop}`;
    // Maintenance covering it, whatever its state; an incident naming it raises it by its impact.
    const w = await api('POST', '/maintenance-windows', {
      project_id: ada.project_id,
      name: 'Now',
      starts_at: new Date(clock.now() - 60_000).toISOString(),
      ends_at: new Date(clock.now() + 3_600_000).toISOString(),
      heartbeat_ids: [nightly],
    });
    assert.equal(w.status, 201, JSON.stringify(w.body));
    await incident(p.id, { title: 'Shop hiccup', impact: 'minor', components: [{ type: 'monitor', id: shop }] });
    const s = JSON.parse((await ok(`/status/${p.slug}/summary.json`)).text);
    assert.deepEqual(
      s.components.map((c: { status: string; text: string }) => [c.status, c.text]),
      [
        ['degraded', 'Up'],
        ['maintenance', 'Maintenance'],
      ],
    );
    await api('DELETE', `/maintenance-windows/${w.body.data.id}`);
  });

  it('never shows a URL, an error text, a monitor the page does not show, or the project', async () => {
    await seedIncident(cp.db.sql, shop, new Date(clock.now() - 600_000), null, 'db password rejected for user admin');
    await seedIncident(cp.db.sql, internal, new Date(clock.now() - 600_000), null, 'internal cause text');
    await cp.db.sql`update monitors set status = 2 where id in ${cp.db.sql([shop, internal])}`;
    const p = await page();
    await incident(p.id, { title: 'Shop down', impact: 'critical', components: [{ type: 'monitor', id: shop }] });
    for (const path of ['feed.atom', 'feed.rss', 'summary.json']) {
      const { text } = await ok(`/status/${p.slug}/${path}`);
      for (const secret of [
        'secret-internal',
        'k-123',
        'db password',
        'internal cause',
        'Internal admin',
        'shop-prod-eu',
        p.project_id,
        p.id,
      ]) {
        assert.ok(!text.includes(secret), `${path} shows ${secret}`);
      }
    }
    await cp.db.sql`update monitors set status = 1`;
    await cp.db.sql`update incidents set ended_at = now() where ended_at is null`;
  });

  it('answers 404 for an unknown or malformed address and for a retired one', async () => {
    for (const path of ['feed.atom', 'feed.rss', 'summary.json']) {
      const unknown = await get(`/status/AAAAAAAAAAAAAAAAAAAAAA/${path}`);
      assert.equal(unknown.status, 404, path);
      assert.equal(unknown.headers['cache-control'], 'no-store');
      assert.equal((await get(`/status/short/${path}`)).status, 404, path);
    }
    assert.match((await get('/status/AAAAAAAAAAAAAAAAAAAAAA/summary.json')).headers['content-type'] as string, /^application\/json/);
    const p = await page();
    await ok(`/status/${p.slug}/summary.json`);
    const moved = await api('POST', `/status-pages/${p.id}/address`);
    assert.equal(moved.status, 200);
    for (const path of ['feed.atom', 'feed.rss', 'summary.json']) {
      assert.equal((await get(`/status/${p.slug}/${path}`)).status, 404, `the retired address: ${path}`);
      await ok(`/status/${moved.body.data.slug}/${path}`);
    }
  });

  it('serves the feeds and the summary at the page’s own host name, with links there', async () => {
    const p = await page({ custom_domain: 'status.feeds.example' });
    const i = await incident(p.id, { title: 'At home' });
    const atHost = { host: 'status.feeds.example' };
    const feed = parseXml((await ok('/feed.atom', atHost)).text);
    const entry = children(feed, 'entry')[0]!;
    const scheme = new URL(cp.config.PUBLIC_URL).protocol;
    assert.equal(child(entry, 'link')!.attributes['href'], `${scheme}//status.feeds.example/status/${p.slug}/incidents/${i.id}`);
    assert.equal(child(feed, 'link')!.attributes['href'], `${scheme}//status.feeds.example/feed.atom`);
    const rss = parseXml((await ok('/feed.rss', { host: 'STATUS.feeds.example:443' })).text);
    assert.equal(textOf(child(rss, 'channel')!, 'link'), `${scheme}//status.feeds.example/`);
    const summary = await ok('/summary.json?v=2', atHost);
    assert.equal(JSON.parse(summary.text).page.url, `${scheme}//status.feeds.example/`);
    // The same bytes at either address: nothing is built from the Host header.
    const bySlug = await ok(`/status/${p.slug}/feed.atom`, { host: 'evil.example' });
    assert.equal(bySlug.headers['etag'], (await ok('/feed.atom', atHost)).headers['etag']);
    assert.doesNotMatch(bySlug.text, /evil\.example/);
    assert.equal((await get('/feed.atom', { host: 'nobody.example' })).status, 404);
    assert.equal((await get('/summary.json', { host: 'nobody.example' })).status, 404);
    // The app's own address has no feed at its root.
    assert.equal((await get('/feed.atom')).status, 404);
  });

  it('links its feeds from the page’s head and footer', async () => {
    const p = await page();
    const { text } = await ok(`/status/${p.slug}`);
    assert.match(
      text,
      new RegExp(
        `<link rel="alternate" type="application/atom\\+xml" title="Acme status \\(Atom\\)" href="/status/${p.slug}/feed.atom" />`,
      ),
    );
    assert.match(text, new RegExp(`<link rel="alternate" type="application/rss\\+xml"[^>]*href="/status/${p.slug}/feed.rss" />`));
    const footer = /<span data-testid="subscribe"[^]*?<\/span/.exec(text)?.[0] ?? '';
    assert.match(
      footer,
      /Subscribe: <a href="[^"]+\/feed\.atom"[^>]*>Atom<\/a> ·\s*<a href="[^"]+\/feed\.rss"[^>]*>RSS<\/a> ·\s*<a href="[^"]+\/summary\.json"[^>]*>JSON<\/a>/,
    );
  });
});
