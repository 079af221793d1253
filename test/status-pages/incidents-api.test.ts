import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { apiClient, assertInvalid, timestampFormat, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

/** Incidents written on a status page through the REST API: drafts, timelines, publishing, postmortems, the banner. */
describe('status page incidents API', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let bob: TestAccount;
  let api: Call;
  let shop: string;
  let search: string;
  let backup: string;
  let other: string;
  let pageId: string;

  const incidents = (id = pageId) => `/status-pages/${id}/incidents`;
  const create = async (body: Record<string, unknown>, expect = 201) => {
    const res = await api('POST', incidents(), { title: 'Checkout is failing', message: 'We are looking into it.', ...body });
    assert.equal(res.status, expect, JSON.stringify(res.body));
    return res.body.data;
  };
  const overall = async () => (await api('GET', `/status-pages/${pageId}`)).body.data.overall.level;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    [ada, bob] = await Promise.all([createAccount(cp.db.sql), createAccount(cp.db.sql)]);
    await cp.db.sql`update users set name = 'Ada Lovelace' where id = ${ada.user_id}`;
    api = apiClient(cp.url, ada.token);
    const monitor = async (name: string) =>
      (await api('POST', '/monitors', { name, url: 'https://example.com', project_id: ada.project_id })).body.data.id as string;
    shop = await monitor('shop-prod');
    search = await monitor('search-prod');
    other = await monitor('not on the page');
    backup = (await api('POST', '/heartbeats', { name: 'backup-job', project_id: ada.project_id })).body.data.id;
    const page = await api('POST', '/status-pages', {
      project_id: ada.project_id,
      title: 'Acme',
      groups: [
        {
          name: 'Storefront',
          components: [
            { type: 'monitor', id: shop, display_name: 'Web shop' },
            { type: 'monitor', id: search },
          ],
        },
        { name: 'Jobs', components: [{ type: 'heartbeat', id: backup, display_name: 'Backups' }] },
      ],
    });
    assert.equal(page.status, 201, JSON.stringify(page.body));
    pageId = page.body.data.id;
    assert.equal(page.body.data.auto_publish_incidents, false, 'drafts wait for a person by default');
    await cp.db.sql`update monitors set status = 1 where id = any(${[shop, search, other]})`;
  });
  after(() => cp.stop());

  it('writes a draft with its first update and the components it affects, named as the page names them', async () => {
    const res = await api('POST', incidents(), {
      title: 'Checkout is failing',
      impact: 'major',
      message: 'Payments time out; we are **on it**.',
      components: [{ type: 'monitor', id: shop }],
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.message, 'Incident created successfully');
    const i = res.body.data;
    assert.equal(i.status_page_id, pageId);
    assert.equal(i.title, 'Checkout is failing');
    assert.equal(i.impact, 'major');
    assert.equal(i.status, 'investigating');
    assert.equal(i.published, false);
    assert.equal(i.published_at, null);
    assert.deepEqual(i.components, [{ type: 'monitor', id: shop, name: 'Web shop' }]);
    assert.equal(i.updates.length, 1);
    assert.deepEqual(
      { ...i.updates[0], id: undefined, at: undefined },
      { id: undefined, at: undefined, status: 'investigating', message: 'Payments time out; we are **on it**.', by: 'Ada Lovelace' },
    );
    assert.match(i.updates[0].at, timestampFormat);
    assert.match(i.created_at, timestampFormat);
    assert.equal(i.resolved_at, null);
    assert.equal(i.source, null);
    assert.equal(i.suggested_update, null);
    assert.deepEqual((await api('GET', `${incidents()}/${i.id}`)).body, { data: i });
    assert.equal(await overall(), 'operational', 'a draft does not raise the banner');
  });

  it('raises the banner by the heaviest published incident that is not resolved, and lets go once it is resolved', async () => {
    const minor = await create({ impact: 'minor', published: true });
    assert.equal(minor.published, true);
    assert.match(minor.published_at, timestampFormat);
    assert.equal(await overall(), 'degraded');
    const critical = await create({ impact: 'critical', published: true });
    assert.equal(await overall(), 'major_outage');
    const resolved = await api('POST', `${incidents()}/${critical.id}/updates`, { status: 'resolved', message: 'Fixed.' });
    assert.equal(resolved.status, 201, JSON.stringify(resolved.body));
    assert.equal(resolved.body.message, 'Incident update posted successfully');
    assert.equal(resolved.body.data.status, 'resolved');
    assert.match(resolved.body.data.resolved_at, timestampFormat);
    assert.deepEqual(
      resolved.body.data.updates.map((u: { status: string }) => u.status),
      ['resolved', 'investigating'],
      'newest first',
    );
    assert.equal(await overall(), 'degraded', 'the minor one is still open');
    await api('PATCH', `${incidents()}/${minor.id}`, { published: false });
    assert.equal(await overall(), 'operational', 'taken off the public page, it no longer counts');
    // Reopened by an update of another status: resolved_at goes.
    const reopened = await api('POST', `${incidents()}/${critical.id}/updates`, { status: 'monitoring', message: 'It came back.' });
    assert.equal(reopened.body.data.status, 'monitoring');
    assert.equal(reopened.body.data.resolved_at, null);
    assert.equal(await overall(), 'major_outage');
    await api('POST', `${incidents()}/${critical.id}/updates`, { status: 'resolved', message: 'Fixed for good.' });
  });

  it('publishes, edits title, impact and components, and writes and publishes a postmortem', async () => {
    const i = await create({ components: [{ type: 'monitor', id: shop }] });
    const patched = await api('PATCH', `${incidents()}/${i.id}`, {
      title: 'Checkout and search are slow',
      impact: 'minor',
      components: [
        { type: 'monitor', id: search },
        { type: 'heartbeat', id: backup },
      ],
      published: true,
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.message, 'Incident updated successfully');
    const p = patched.body.data;
    assert.equal(p.title, 'Checkout and search are slow');
    assert.equal(p.impact, 'minor');
    assert.deepEqual(p.components, [
      { type: 'monitor', id: search, name: 'search-prod' },
      { type: 'heartbeat', id: backup, name: 'Backups' },
    ]);
    assert.equal(p.published, true);
    const firstPublished = p.published_at;
    const again = (await api('PATCH', `${incidents()}/${i.id}`, { published: true })).body.data;
    assert.equal(again.published_at, firstPublished, 'publishing again keeps the first instant');

    assertInvalid(await api('PATCH', `${incidents()}/${i.id}`, { postmortem_published: true }), ['postmortem_published']);
    const written = (await api('PATCH', `${incidents()}/${i.id}`, { postmortem: '# What happened\n\nA bad deploy.' })).body.data;
    assert.equal(written.postmortem, '# What happened\n\nA bad deploy.');
    assert.equal(written.postmortem_published, false);
    const shown = (await api('PATCH', `${incidents()}/${i.id}`, { postmortem_published: true })).body.data;
    assert.equal(shown.postmortem_published, true);
    assert.match(shown.postmortem_published_at, timestampFormat);
    const cleared = (await api('PATCH', `${incidents()}/${i.id}`, { postmortem: '' })).body.data;
    assert.equal(cleared.postmortem_published, false, 'an emptied postmortem is no longer published');
  });

  it('lists the incidents of a page newest first, drafts included, filtered by open or resolved, paginated', async () => {
    const all = await api('GET', `${incidents()}?per_page=100`);
    assert.equal(all.status, 200);
    const created = all.body.data.map((i: { created_at: string }) => i.created_at);
    assert.deepEqual(created, [...created].sort().reverse());
    assert.ok(
      all.body.data.some((i: { published: boolean }) => !i.published),
      'drafts are listed',
    );
    const open = await api('GET', `${incidents()}?status=open`);
    assert.ok(open.body.data.every((i: { status: string }) => i.status !== 'resolved'));
    const resolved = await api('GET', `${incidents()}?status=resolved`);
    assert.ok(resolved.body.data.length >= 1 && resolved.body.data.every((i: { status: string }) => i.status === 'resolved'));
    assert.equal(open.body.meta.total + resolved.body.meta.total, all.body.meta.total);
    const paged = await api('GET', `${incidents()}?per_page=1&page=2`);
    assert.equal(paged.body.data.length, 1);
    assert.equal(paged.body.data[0].id, all.body.data[1].id);
    assertInvalid(await api('GET', `${incidents()}?status=closed`), ['status']);
  });

  it('names the field of every bad input', async () => {
    assertInvalid(await api('POST', incidents(), { message: 'x' }), ['title']);
    assertInvalid(await api('POST', incidents(), { title: '  ', message: 'x' }), ['title']);
    assertInvalid(await api('POST', incidents(), { title: 'x' }), ['message']);
    assertInvalid(await api('POST', incidents(), { title: 'x', message: 'x', impact: 'huge' }), ['impact']);
    assertInvalid(await api('POST', incidents(), { title: 'x', message: 'x', status: 'fixed' }), ['status']);
    assertInvalid(await api('POST', incidents(), { title: 'x', message: 'x'.repeat(10_001) }), ['message']);
    assertInvalid(await api('POST', incidents(), { title: 'x\u0000', message: 'x' }), ['title']);
    assertInvalid(await api('POST', incidents(), { title: 'x', message: 'x', components: [{ type: 'monitor', id: other }] }), [
      'components.0.id',
    ]);
    assertInvalid(
      await api('POST', incidents(), {
        title: 'x',
        message: 'x',
        components: [
          { type: 'monitor', id: shop },
          { type: 'monitor', id: shop },
        ],
      }),
      ['components.1.id'],
    );
    assertInvalid(await api('POST', incidents(), { title: 'x', message: 'x', components: [{ type: 'heartbeat', id: shop }] }), [
      'components.0.id',
    ]);
    const i = await create({});
    assertInvalid(await api('POST', `${incidents()}/${i.id}/updates`, { status: 'resolved' }), ['message']);
    assertInvalid(await api('POST', `${incidents()}/${i.id}/updates`, { status: 'done', message: 'x' }), ['status']);
    assertInvalid(await api('PATCH', `${incidents()}/${i.id}`, { postmortem: 'x'.repeat(50_001) }), ['postmortem']);
    assertInvalid(await api('PATCH', `${incidents()}/${i.id}`, { published: 'yes' }), ['published']);
    const malformed = await api('POST', incidents(), '{"title":');
    assert.equal(malformed.status, 400);
  });

  it('answers 404 for an incident of another page, a missing one, and another tenant’s, and deletes', async () => {
    const second = (await api('POST', '/status-pages', { project_id: ada.project_id, title: 'Internal' })).body.data.id;
    const i = await create({});
    assert.equal((await api('GET', `${incidents(second)}/${i.id}`)).status, 404, 'not of that page');
    assert.equal((await api('GET', `${incidents()}/${randomUUID()}`)).status, 404);
    assert.equal((await api('GET', `${incidents()}/not-a-uuid`)).status, 404);
    const bobs = apiClient(cp.url, bob.token);
    assert.equal((await bobs('GET', `${incidents()}/${i.id}`)).status, 404);
    assert.equal((await bobs('GET', incidents())).status, 404);
    assert.equal((await bobs('POST', `${incidents()}/${i.id}/updates`, { status: 'resolved', message: 'x' })).status, 404);
    assert.equal((await bobs('DELETE', `${incidents()}/${i.id}`)).status, 404);
    assert.equal((await api('GET', `${incidents()}/${i.id}`)).status, 200, 'still there');
    const deleted = await api('DELETE', `${incidents()}/${i.id}`);
    assert.equal(deleted.status, 204);
    assert.equal((await api('GET', `${incidents()}/${i.id}`)).status, 404);
    // A page without groups shows every monitor and heartbeat: any of the project may be named.
    const everything = await api('POST', incidents(second), {
      title: 'x',
      message: 'x',
      components: [{ type: 'monitor', id: other }],
    });
    assert.equal(everything.status, 201, JSON.stringify(everything.body));
    assert.deepEqual(everything.body.data.components, [{ type: 'monitor', id: other, name: 'not on the page' }]);
  });

  it('keeps an incident’s components that leave the page, shown without a name, and drops them with their monitor', async () => {
    const i = await create({ components: [{ type: 'monitor', id: search }] });
    const groups = [{ name: 'Storefront', components: [{ type: 'monitor', id: shop, display_name: 'Web shop' }] }];
    assert.equal((await api('PATCH', `/status-pages/${pageId}`, { groups })).status, 200);
    assert.deepEqual((await api('GET', `${incidents()}/${i.id}`)).body.data.components, [{ type: 'monitor', id: search, name: null }]);
    await api('DELETE', `/monitors/${search}`);
    assert.deepEqual((await api('GET', `${incidents()}/${i.id}`)).body.data.components, []);
  });
});
