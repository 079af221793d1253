import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { applyOutageEvents } from '../../control-plane/src/status-pages/incidents/drafter.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { webClient } from '../web/client.ts';
import { seedIncident } from '../web/seed.ts';

/** Markdown a hostile writer could try: none of it may become markup that runs, loads or leads to a script. */
const hostile = [
  '<script>alert("s")</script>',
  '<img src=x onerror=alert("i")>',
  '[click me](javascript:alert("j"))',
  '[encoded](&#106;avascript:alert("e"))',
  '<javascript:alert("a")>',
  '[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
  '![tracker](https://evil.example/pixel.png)',
  '<a href="javascript:alert(1)">raw link</a>',
  '<iframe src="https://evil.example"></iframe>',
  '[title](https://example.com "x\\" onmouseover=\\"alert(1)")',
  '**Payments** are back; see [our notes](https://example.com/notes).',
].join('\n\n');

/** What a visitor reads of a page's incidents: published ones only, timelines newest first, Markdown made safe. */
describe('status page incidents on the public page', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let shop: string;
  let pageId: string;
  let slug: string;
  let otherSlug: string;

  const visit = async (path: string, expect = 200) => {
    const res = await webClient(cp.url).get(path);
    assert.equal(res.status, expect, `${path}: ${res.text.slice(0, 300)}`);
    return res.text;
  };
  const write = async (body: Record<string, unknown>, page = pageId) => {
    const res = await api('POST', `/status-pages/${page}/incidents`, { message: 'We are looking into it.', ...body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data as { id: string };
  };
  const post = (id: string, status: string, message: string) =>
    api('POST', `/status-pages/${pageId}/incidents/${id}/updates`, { status, message });
  const headings = (text: string) => [...text.matchAll(/<h([1-6])[^>]*>([^<]*)</g)].map((m) => `h${m[1]} ${m[2]!.trim()}`);
  /** What no public page may ever hold, whatever was written. */
  const assertInert = (text: string) => {
    assert.doesNotMatch(text, /<script(?![^>]*src="\/assets\/)/i, 'no script of the writer');
    assert.doesNotMatch(text, /<img|<iframe/i, 'nothing loaded from elsewhere');
    assert.doesNotMatch(text, /href="\s*(javascript|data|vbscript):/i, 'no link to a script');
    // Every attribute of every tag (escaped text is not a tag; a quoted value is not an attribute).
    const attributes = [...text.matchAll(/<[a-z][a-z0-9]*((?:\s+[a-z-]+(?:="[^"]*")?)*)\s*\/?>/gi)].flatMap((tag) =>
      [...tag[1]!.matchAll(/\s+([a-z-]+)(?:="[^"]*")?/gi)].map((a) => a[1]!.toLowerCase()),
    );
    assert.ok(attributes.length > 50, 'tags were read');
    assert.deepEqual(
      attributes.filter((a) => a.startsWith('on') || a === 'srcdoc' || a === 'style'),
      [],
      'no event handler attribute',
    );
  };

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    const monitor = async (name: string) =>
      (await api('POST', '/monitors', { name, url: 'https://internal.example', project_id: ada.project_id })).body.data.id as string;
    shop = await monitor('shop-prod-eu');
    await monitor('Internal admin');
    await cp.db.sql`update monitors set status = 1`;
    const page = await api('POST', '/status-pages', {
      project_id: ada.project_id,
      title: 'Acme',
      groups: [{ name: 'Storefront', components: [{ type: 'monitor', id: shop, display_name: 'Web shop' }] }],
    });
    pageId = page.body.data.id;
    slug = page.body.data.slug;
    otherSlug = (await api('POST', '/status-pages', { project_id: ada.project_id, title: 'Other' })).body.data.slug;
  });
  after(() => cp.stop());

  it('shows published ongoing incidents at the top with their timeline newest first, and no draft', async () => {
    const ongoing = await write({
      title: 'Checkout <b>fails</b>',
      impact: 'major',
      components: [{ type: 'monitor', id: shop }],
      published: true,
    });
    await post(ongoing.id, 'identified', 'A bad deploy; rolling back.');
    await post(ongoing.id, 'monitoring', hostile);
    await write({ title: 'Secret draft about Internal admin' });

    const text = await visit(`/status/${slug}`);
    assertInert(text);
    const section = /<section class="card" aria-labelledby="incidents"[^]*?<\/section>/.exec(text)?.[0] ?? '';
    assert.match(section, /<h2 id="incidents">Ongoing incidents<\/h2>/);
    assert.match(section, new RegExp(`<a href="/status/${slug}/incidents/${ongoing.id}">Checkout &lt;b&gt;fails&lt;/b&gt;</a>`));
    assert.match(section, /data-impact="major"[^>]*>Major impact/);
    assert.match(section, /Affects Web shop/);
    const statuses = [...section.matchAll(/<li class="timeline-item" data-incident-status="([a-z]+)"/g)].map((m) => m[1]);
    assert.deepEqual(statuses, ['monitoring', 'identified', 'investigating'], 'newest first');
    assert.match(section, /<strong>Monitoring<\/strong>/);
    assert.match(section, /<time datetime="\d{4}-\d{2}-\d{2}T[^"]+" title="[^"]+">\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC<\/time>/);
    // The Markdown that is allowed renders; the rest is text.
    assert.match(
      section,
      /<strong>Payments<\/strong> are back; see <a href="https:\/\/example.com\/notes" rel="nofollow noopener noreferrer">our notes<\/a>/,
    );
    assert.match(section, /&lt;script&gt;alert\(&quot;s&quot;\)&lt;\/script&gt;/);
    assert.match(section, /\[click me\]\(javascript:alert\(&quot;j&quot;\)\)/);
    assert.doesNotMatch(text, /Secret draft|Internal admin|shop-prod-eu/, 'a draft is not public, nor names the page does not use');
    assert.match(text, /data-testid="overall" data-level="partial_outage"/, 'the major published incident raises the banner');
    assert.equal((await visit(`/status/${slug}?fragment=1`)).includes('Checkout &lt;b&gt;fails'), true, 'in the live fragment too');
    await post(ongoing.id, 'resolved', 'Fixed.');
  });

  it('shows an outage a published incident tells of once: as the incident', async () => {
    const started = new Date(Date.now() - 120_000);
    await seedIncident(cp.db.sql, shop, started, null);
    const [row] = await cp.db.sql<{ id: string }[]>`select id from incidents where monitor_id = ${shop} and ended_at is null`;
    await cp.db.sql`update monitors set status = 2 where id = ${shop}`;
    let text = await visit(`/status/${slug}`);
    assert.match(text, new RegExp(`data-outage="${shop}"`), 'a detected outage before anyone writes about it');
    await api('PATCH', `/status-pages/${pageId}`, { auto_publish_incidents: true });
    await cp.db.sql.begin((tx) =>
      applyOutageEvents(tx, [
        {
          id: randomUUID(),
          kind: 'monitor.down',
          occurred_at: started.toISOString(),
          project_id: ada.project_id,
          subject: { type: 'monitor', id: shop, name: 'shop-prod-eu' },
          data: { incident_id: row!.id },
        },
      ]),
    );
    text = await visit(`/status/${slug}`);
    assert.doesNotMatch(text, /data-outage=/, 'not listed twice');
    assert.match(text, /Web shop is down/);
    await api('PATCH', `/status-pages/${pageId}`, { auto_publish_incidents: false });
    await cp.db.sql`update incidents set ended_at = now() where id = ${row!.id}`;
    await cp.db.sql`update monitors set status = 1 where id = ${shop}`;
    const drafted = (await api('GET', `/status-pages/${pageId}/incidents?status=open`)).body.data;
    for (const i of drafted) await post(i.id, 'resolved', 'Back.');
  });

  it('lists incidents resolved within 7 days below the components, and older ones only in the month’s history', async () => {
    const old = await write({ title: 'Old slowness', impact: 'minor', published: true });
    await post(old.id, 'resolved', 'Done.');
    await cp.db.sql`
      update status_page_incidents set created_at = '2026-03-10T08:00:00Z', resolved_at = '2026-03-10T09:00:00Z' where id = ${old.id}`;
    const text = await visit(`/status/${slug}`);
    const resolved = /<section class="card" aria-labelledby="resolved"[^]*?<\/section>/.exec(text)?.[0] ?? '';
    assert.match(resolved, /<h2 id="resolved">Resolved in the last 7 days<\/h2>/);
    assert.match(resolved, /Checkout &lt;b&gt;fails/);
    assert.match(resolved, /data-incident-status="resolved">Resolved</);
    assert.doesNotMatch(text, /Old slowness/);
    assert.ok(text.indexOf('aria-labelledby="resolved"') > text.indexOf('aria-labelledby="group-0"'), 'below the components');
    assert.match(text, new RegExp(`<a href="/status/${slug}/history">Incident history</a>`));

    const march = await visit(`/status/${slug}/history?month=2026-03`);
    assertInert(march);
    assert.match(march, /Old slowness/);
    assert.doesNotMatch(march, /Checkout/);
    assert.deepEqual(headings(march).slice(0, 3), ['h1 Incident history', 'h2 March 2026', 'h3 ']);
    assert.match(march, new RegExp(`href="/status/${slug}/history\\?month=2026-02" rel="prev"`));
    assert.match(march, new RegExp(`href="/status/${slug}/history\\?month=2026-04" rel="next"`));
    const current = await visit(`/status/${slug}/history`);
    assert.match(current, /Checkout &lt;b&gt;fails/);
    assert.doesNotMatch(current, /Old slowness|Secret draft/);
    assert.doesNotMatch(current, /rel="next"/, 'no month ahead of this one');
    for (const bad of ['2026-13', '26-03', 'march', '2026-3']) await visit(`/status/${slug}/history?month=${bad}`, 400);
    await visit(`/status/${'x'.repeat(22)}/history`, 404);
  });

  it('gives each published incident a page with its timeline and published postmortem, and no draft one', async () => {
    const i = await write({ title: 'Database failover', impact: 'critical', components: [{ type: 'monitor', id: shop }], published: true });
    await post(i.id, 'resolved', 'Failover done.');
    const page = `/status/${slug}/incidents/${i.id}`;
    let text = await visit(page);
    assert.doesNotMatch(text, /Postmortem/, 'not before it is published');
    await api('PATCH', `/status-pages/${pageId}/incidents/${i.id}`, { postmortem: `# What happened\n\nA disk filled up.\n\n${hostile}` });
    text = await visit(page);
    assert.doesNotMatch(text, /A disk filled up/, 'written, not published');
    await api('PATCH', `/status-pages/${pageId}/incidents/${i.id}`, { postmortem_published: true });
    text = await visit(page);
    assertInert(text);
    assert.deepEqual(headings(text), ['h1 Database failover', 'h2 Updates', 'h2 Postmortem', 'h3 What happened']);
    assert.match(text, /data-impact="critical"[^>]*>Critical impact/);
    assert.match(text, /Affects Web shop/);
    assert.deepEqual(
      [...text.matchAll(/<li class="timeline-item" data-incident-status="([a-z]+)"/g)].map((m) => m[1]),
      ['resolved', 'investigating'],
    );
    assert.match(text, /<p>A disk filled up.<\/p>/);
    assert.match(text, new RegExp(`<a href="/status/${slug}">Acme</a>`), 'back to the page');

    const draft = await write({ title: 'Not yet' });
    await visit(`/status/${slug}/incidents/${draft.id}`, 404);
    await visit(`/status/${otherSlug}/incidents/${i.id}`, 404);
    await visit(`/status/${slug}/incidents/${randomUUID()}`, 404);
    await visit(`/status/${slug}/incidents/not-an-id`, 404);
    await visit(`/status/${slug}/incidents/${'-'.repeat(36)}`, 404);
  });
});
