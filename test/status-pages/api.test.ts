import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { apiClient, assertInvalid, timestampFormat, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

describe('status pages API', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let bob: TestAccount;
  let api: Call;
  let shop: string;
  let search: string;
  let backup: string;
  let bobsMonitor: string;

  const create = async (body: Record<string, unknown>, expect = 201) => {
    const res = await api('POST', '/status-pages', { project_id: ada.project_id, title: 'Acme status', ...body });
    assert.equal(res.status, expect, JSON.stringify(res.body));
    return res;
  };
  const monitor = async (name: string, who: TestAccount = ada) =>
    (await apiClient(cp.url, who.token)('POST', '/monitors', { name, url: 'https://example.com', project_id: who.project_id })).body.data
      .id as string;
  const status = (id: string, s: number, degraded = false) =>
    cp.db.sql`update monitors set status = ${s}, degraded_regions = ${degraded ? cp.db.sql.array(['eu-west']) : null} where id = ${id}`;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'], env: { PUBLIC_URL: 'https://status.example.test' } });
    [ada, bob] = await Promise.all([createAccount(cp.db.sql), createAccount(cp.db.sql)]);
    api = apiClient(cp.url, ada.token);
    shop = await monitor('Shop');
    search = await monitor('Search');
    backup = (await api('POST', '/heartbeats', { name: 'Backup', project_id: ada.project_id })).body.data.id;
    bobsMonitor = await monitor('Bob', bob);
  });
  after(() => cp.stop());

  it('creates a page with groups of monitors and heartbeats and answers 201 with the create envelope', async () => {
    const res = await create({
      description: 'Everything our customers use.',
      groups: [
        {
          name: 'Storefront',
          components: [
            { type: 'monitor', id: shop, display_name: 'Web shop', description: 'Browsing and checkout' },
            { type: 'monitor', id: search },
          ],
        },
        { name: 'Jobs', components: [{ type: 'heartbeat', id: backup }] },
      ],
    });
    assert.equal(res.body.message, 'Status page created successfully');
    const p = res.body.data;
    assert.equal(p.project_id, ada.project_id);
    assert.equal(p.title, 'Acme status');
    assert.equal(p.description, 'Everything our customers use.');
    assert.match(p.slug, /^[A-Za-z0-9_-]{22}$/);
    assert.equal(p.url, `https://status.example.test/status/${p.slug}`);
    assert.match(p.created_at, timestampFormat);
    assert.match(p.updated_at, timestampFormat);
    assert.deepEqual(p.groups, [
      {
        name: 'Storefront',
        components: [
          {
            type: 'monitor',
            id: shop,
            name: 'Shop',
            display_name: 'Web shop',
            description: 'Browsing and checkout',
            status: 0,
            in_maintenance: false,
          },
          { type: 'monitor', id: search, name: 'Search', display_name: null, description: '', status: 0, in_maintenance: false },
        ],
      },
      {
        name: 'Jobs',
        components: [
          { type: 'heartbeat', id: backup, name: 'Backup', display_name: null, description: '', status: 'new', in_maintenance: false },
        ],
      },
    ]);
    assert.deepEqual(p.overall, { level: 'operational', text: 'All systems operational' });
    const got = await api('GET', `/status-pages/${p.id}`);
    assert.deepEqual(got.body, { data: p });
    assert.equal((await fetch(`${cp.url}/status/${p.slug}`)).status, 200, 'public at once');
  });

  it('lets a project have several pages, listed oldest first with the list envelope', async () => {
    const second = (await create({ title: 'Internal' })).body.data;
    assert.deepEqual(second.groups, [], 'no groups: every monitor and heartbeat');
    const all = await api('GET', `/status-pages?project_id=${ada.project_id}`);
    assert.equal(all.status, 200);
    assert.ok(all.body.data.length >= 2);
    assert.equal(all.body.data.at(-1).id, second.id);
    const paged = await api('GET', `/status-pages?project_id=${ada.project_id}&per_page=1&page=2`);
    assert.equal(paged.body.data.length, 1);
    assert.deepEqual(paged.body.meta, { current_page: 2, per_page: 1, total: all.body.meta.total, last_page: all.body.meta.total });
    const unscoped = await api('GET', '/status-pages');
    assert.equal(unscoped.body.meta.total, all.body.meta.total);
    const bobs = await apiClient(cp.url, bob.token)('GET', '/status-pages');
    assert.deepEqual(bobs.body.data, []);
  });

  it('decides the banner from the components shown: all of the project while the page has no groups', async () => {
    const grouped = (await create({ groups: [{ name: 'Shop', components: [{ type: 'monitor', id: shop }] }] })).body.data;
    const everything = (await create({ title: 'All' })).body.data;
    const overall = async (id: string) => (await api('GET', `/status-pages/${id}`)).body.data.overall.level;
    await status(shop, 1);
    await status(search, 1);
    assert.equal(await overall(grouped.id), 'operational');
    await status(search, 2);
    assert.equal(await overall(grouped.id), 'operational', 'search is not on the grouped page');
    assert.equal(await overall(everything.id), 'major_outage', 'one down of two counted (the new heartbeat is not counted)');
    await status(search, 1, true);
    assert.equal(await overall(everything.id), 'degraded');
    const m = await api('POST', '/maintenance-windows', {
      project_id: ada.project_id,
      name: 'Shop upgrade',
      starts_at: new Date(Date.now() - 60_000).toISOString(),
      ends_at: new Date(Date.now() + 3_600_000).toISOString(),
      monitor_ids: [shop],
    });
    assert.equal(m.status, 201, JSON.stringify(m.body));
    const during = (await api('GET', `/status-pages/${grouped.id}`)).body.data;
    assert.equal(during.groups[0].components[0].in_maintenance, true);
    assert.deepEqual(during.overall, { level: 'maintenance', text: 'Under maintenance' });
    await api('DELETE', `/maintenance-windows/${m.body.data.id}`);
    await status(search, 1);
  });

  it('keeps the groups on a PATCH without them, and replaces them all with them, keeping the rows of what stays', async () => {
    const p = (
      await create({
        groups: [
          {
            name: 'Web',
            components: [
              { type: 'monitor', id: shop },
              { type: 'monitor', id: search },
            ],
          },
          { name: 'Jobs', components: [{ type: 'heartbeat', id: backup }] },
        ],
      })
    ).body.data;
    const rows = async () =>
      cp.db.sql<{ id: string; subject: string; group_name: string }[]>`
        select c.id, coalesce(c.monitor_id, c.heartbeat_id)::text as subject, g.name as group_name
        from status_page_components c join status_page_groups g on g.id = c.group_id
        where c.status_page_id = ${p.id} order by c.position`;
    const before = await rows();
    const titled = await api('PATCH', `/status-pages/${p.id}`, { title: 'Renamed', description: 'New words' });
    assert.equal(titled.status, 200, JSON.stringify(titled.body));
    assert.equal(titled.body.message, 'Status page updated successfully');
    assert.equal(titled.body.data.title, 'Renamed');
    assert.deepEqual(titled.body.data.groups, p.groups);
    assert.ok(Date.parse(titled.body.data.updated_at) >= Date.parse(p.updated_at));

    const regrouped = await api('PATCH', `/status-pages/${p.id}`, {
      groups: [
        {
          name: 'jobs',
          components: [
            { type: 'heartbeat', id: backup },
            { type: 'monitor', id: search, display_name: 'Find' },
          ],
        },
        { name: 'Empty for now' },
      ],
    });
    assert.equal(regrouped.status, 200, JSON.stringify(regrouped.body));
    assert.deepEqual(
      regrouped.body.data.groups.map((g: any) => [g.name, g.components.map((c: any) => c.display_name ?? c.name)]),
      [
        ['jobs', ['Backup', 'Find']],
        ['Empty for now', []],
      ],
    );
    const after = await rows();
    assert.deepEqual(
      after.map((r) => r.subject),
      [backup, search],
    );
    const idOf = (list: typeof before, subject: string) => list.find((r) => r.subject === subject)!.id;
    assert.equal(idOf(after, backup), idOf(before, backup), 'the heartbeat kept its component row');
    assert.equal(idOf(after, search), idOf(before, search), 'the moved monitor kept its row');
    assert.equal(after[0]!.group_name, 'jobs', 'the group renamed in case is the same group');

    const cleared = await api('PATCH', `/status-pages/${p.id}`, { groups: [] });
    assert.deepEqual(cleared.body.data.groups, []);
    const [left] = await cp.db.sql`
      select (select count(*) from status_page_components where status_page_id = ${p.id})::int as c,
        (select count(*) from status_page_groups where status_page_id = ${p.id})::int as g`;
    assert.deepEqual(left, { c: 0, g: 0 });
  });

  it('gives a page a new address and retires the old one', async () => {
    const p = (await create({})).body.data;
    const res = await api('POST', `/status-pages/${p.id}/address`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.message, 'Status page address changed successfully');
    assert.notEqual(res.body.data.slug, p.slug);
    assert.equal(res.body.data.url, `https://status.example.test/status/${res.body.data.slug}`);
    assert.equal((await fetch(`${cp.url}/status/${p.slug}`)).status, 404);
    assert.equal((await fetch(`${cp.url}/status/${res.body.data.slug}`)).status, 200);
  });

  it('deletes a page with 204: gone from the API and from its address', async () => {
    const p = (await create({ groups: [{ name: 'Web', components: [{ type: 'monitor', id: shop }] }] })).body.data;
    const res = await api('DELETE', `/status-pages/${p.id}`);
    assert.equal(res.status, 204);
    assert.equal((await api('GET', `/status-pages/${p.id}`)).status, 404);
    assert.equal((await api('DELETE', `/status-pages/${p.id}`)).status, 404);
    assert.equal((await fetch(`${cp.url}/status/${p.slug}`)).status, 404);
  });

  it('takes a deleted monitor or heartbeat off every page', async () => {
    const gone = await monitor('Temporary');
    const p = (
      await create({
        groups: [
          {
            name: 'Web',
            components: [
              { type: 'monitor', id: gone },
              { type: 'monitor', id: shop },
            ],
          },
        ],
      })
    ).body.data;
    assert.equal((await api('DELETE', `/monitors/${gone}`)).status, 204);
    const after = (await api('GET', `/status-pages/${p.id}`)).body.data;
    assert.deepEqual(
      after.groups[0].components.map((c: { id: string }) => c.id),
      [shop],
    );
  });

  it('refuses components of another project, naming the component', async () => {
    const res = await api('POST', '/status-pages', {
      project_id: ada.project_id,
      title: 'x',
      groups: [
        {
          name: 'Web',
          components: [
            { type: 'monitor', id: shop },
            { type: 'monitor', id: bobsMonitor },
          ],
        },
      ],
    });
    assertInvalid(res, ['groups.0.components.1.id']);
    assert.match(res.body.errors['groups.0.components.1.id'][0], /Not a monitor of this project/);
    // An id of this project of the other type is not one either.
    assertInvalid(
      await api('POST', '/status-pages', {
        project_id: ada.project_id,
        title: 'x',
        groups: [{ name: 'Web', components: [{ type: 'heartbeat', id: shop }] }],
      }),
      ['groups.0.components.0.id'],
    );
    const p = (await create({})).body.data;
    assertInvalid(
      await api('PATCH', `/status-pages/${p.id}`, { groups: [{ name: 'Web', components: [{ type: 'monitor', id: randomUUID() }] }] }),
      ['groups.0.components.0.id'],
    );
  });

  it('refuses another tenant: 403 for a project, 404 for a page', async () => {
    const evil = apiClient(cp.url, bob.token);
    const p = (await create({})).body.data;
    const forbidden = await evil('POST', '/status-pages', { project_id: ada.project_id, title: 'x' });
    assert.equal(forbidden.status, 403);
    assert.equal((await evil('GET', `/status-pages?project_id=${ada.project_id}`)).status, 403);
    for (const [method, path, body] of [
      ['GET', `/status-pages/${p.id}`],
      ['PATCH', `/status-pages/${p.id}`, { title: 'taken' }],
      ['DELETE', `/status-pages/${p.id}`],
      ['POST', `/status-pages/${p.id}/address`],
    ] as const) {
      const res = await evil(method, path, body);
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.deepEqual(res.body, { message: 'Not found' });
    }
    const still = (await api('GET', `/status-pages/${p.id}`)).body.data;
    assert.deepEqual(still, p);
  });

  it('answers every bad input with a 4xx naming the field', async () => {
    const bad = (body: Record<string, unknown>) => api('POST', '/status-pages', { project_id: ada.project_id, title: 'x', ...body });
    const component = (extra: Record<string, unknown> = {}) => ({ type: 'monitor', id: shop, ...extra });
    assertInvalid(await api('POST', '/status-pages', { project_id: ada.project_id }), ['title']);
    assertInvalid(await bad({ title: '   ' }), ['title']);
    assertInvalid(await bad({ title: 'x'.repeat(256) }), ['title']);
    assertInvalid(await bad({ title: 'a\u0000b' }), ['title']);
    assertInvalid(await bad({ description: 'x'.repeat(2001) }), ['description']);
    assertInvalid(await bad({ project_id: 'nope' }), ['project_id']);
    assertInvalid(await bad({ groups: 'Web' }), ['groups']);
    assertInvalid(await bad({ groups: [{ components: [] }] }), ['groups.0.name']);
    assertInvalid(await bad({ groups: [{ name: 'Web' }, { name: 'WEB' }] }), ['groups.1.name']);
    assertInvalid(await bad({ groups: [{ name: 'Web', components: [component({ type: 'page' })] }] }), ['groups.0.components.0.type']);
    assertInvalid(await bad({ groups: [{ name: 'Web', components: [component({ id: 'shop' })] }] }), ['groups.0.components.0.id']);
    assertInvalid(await bad({ groups: [{ name: 'Web', components: [component({ display_name: 'x'.repeat(256) })] }] }), [
      'groups.0.components.0.display_name',
    ]);
    assertInvalid(await bad({ groups: [{ name: 'Web', components: [component({ description: 7 })] }] }), [
      'groups.0.components.0.description',
    ]);
    assertInvalid(
      await bad({
        groups: [
          { name: 'Web', components: [component()] },
          { name: 'Again', components: [component()] },
        ],
      }),
      ['groups.1.components.0.id'],
    );
    assertInvalid(await bad({ groups: Array.from({ length: 51 }, (_, i) => ({ name: `g${i}` })) }), ['groups']);
    const many = (n: number) => Array.from({ length: n }, () => component({ id: randomUUID() }));
    assertInvalid(await bad({ groups: [{ name: 'Web', components: many(201) }] }), ['groups.0.components']);
    const tooMany = await bad({
      groups: [
        { name: 'A', components: many(150) },
        { name: 'B', components: many(60) },
      ],
    });
    assertInvalid(tooMany, ['groups']);
    assert.match(tooMany.body.errors.groups[0], /at most 200 components/);
    const p = (await create({})).body.data;
    assertInvalid(await api('PATCH', `/status-pages/${p.id}`, { title: '' }), ['title']);
    assertInvalid(await api('PATCH', `/status-pages/${p.id}`, { groups: [{ name: 'Web', components: [component({ type: null })] }] }), [
      'groups.0.components.0.type',
    ]);
    const malformed = await api('POST', '/status-pages', '{"title":');
    assert.equal(malformed.status, 400);
    assert.equal((await api('GET', `/status-pages/${randomUUID()}`)).status, 404);
    assert.equal((await api('GET', '/status-pages?page=0')).status, 422);
  });

  it('holds a project to 50 pages', async () => {
    const project = (await api('POST', '/projects', { name: 'Many pages', organization_id: ada.organization_id })).body.data.id;
    const { count } = (
      await cp.db.sql<{ count: number }[]>`select count(*)::int as count from status_pages where project_id = ${project}`
    )[0]!;
    assert.equal(count, 0);
    for (let i = 0; i < 50; i++) await create({ project_id: project, title: `Page ${i}` });
    assertInvalid(await api('POST', '/status-pages', { project_id: project, title: 'One more' }), ['project_id']);
  });
});
