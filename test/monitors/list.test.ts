import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

describe('monitor lists over several projects', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let projects: string[];
  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    projects = [ada.project_id];
    for (const name of ['Second', 'Third']) projects.push((await api('POST', '/projects', { name })).body.data.id);
    // Interleaved, so a page mixes projects.
    for (let i = 0; i < 31; i++) {
      const res = await api('POST', '/monitors', { name: `m${i}`, url: 'https://example.com', project_id: projects[i % 3] });
      assert.equal(res.status, 201);
    }
  });
  after(() => cp.stop());

  /** What a page must hold, from the monitors table itself. */
  const expected = async (ids: readonly string[], page: number, perPage: number) => {
    const all = await cp.db.sql<{ id: string }[]>`select id from monitors where project_id = any(${ids}::uuid[]) order by created_at, id`;
    return { ids: all.slice((page - 1) * perPage, page * perPage).map((r) => r.id), total: all.length };
  };
  const countsMatch = async () => {
    const drift = await cp.db.sql`
      select coalesce(c.project_id, m.project_id) as project_id, c.monitors, m.n from monitor_counts c
      full join (select project_id, count(*)::int as n from monitors group by project_id) m on m.project_id = c.project_id
      where coalesce(c.monitors, 0) <> coalesce(m.n, 0)`;
    assert.deepEqual([...drift], [], 'kept counts equal a recount');
  };
  const assertPages = async (perPage: number) => {
    const { total } = await expected(projects, 1, perPage);
    for (let page = 1; page <= Math.ceil(total / perPage) + 1; page++) {
      const res = await api('GET', `/monitors?page=${page}&per_page=${perPage}`);
      assert.equal(res.status, 200);
      const want = await expected(projects, page, perPage);
      assert.deepEqual(
        res.body.data.map((m: { id: string }) => m.id),
        want.ids,
        `page ${page} of ${perPage}`,
      );
      assert.deepEqual(res.body.meta, {
        current_page: page,
        per_page: perPage,
        total: want.total,
        last_page: Math.max(1, Math.ceil(want.total / perPage)),
      });
    }
  };

  it('pages the monitors of all projects in one order, with the total of all of them', async () => {
    await assertPages(25);
    await assertPages(7);
    await countsMatch();
  });

  it('keeps totals and pages right as monitors are deleted, moved and their project deleted', async () => {
    const ids = (await cp.db.sql<{ id: string; project_id: string }[]>`select id, project_id from monitors order by created_at, id`).map(
      (r) => r,
    );
    assert.equal((await api('DELETE', `/monitors/${ids[0]!.id}`)).status, 204);
    await cp.db.sql`delete from monitors where id = any(${[ids[1]!.id, ids[2]!.id]}::uuid[])`;
    await cp.db.sql`update monitors set project_id = ${projects[1]!} where id = ${ids[5]!.id}`;
    await countsMatch();
    await assertPages(10);
    const one = await api('GET', `/monitors?project_id=${projects[1]}`);
    assert.equal(one.body.meta.total, (await expected([projects[1]!], 1, 25)).total);

    assert.equal((await api('DELETE', `/projects/${projects[2]}`)).status, 204);
    projects = projects.slice(0, 2);
    await countsMatch();
    await assertPages(25);
  });

  it('shows the newest check of any region as last_checked', async () => {
    const m = (await api('POST', '/monitors', { name: 'checked', url: 'https://example.com', project_id: ada.project_id })).body.data;
    assert.equal(m.last_checked, 'never');
    await cp.db.sql`
      insert into monitor_regions (monitor_id, region, ok, scheduled_at, checked_at) values
        (${m.id}, 'eu', true, now() - interval '3 minutes', now() - interval '3 minutes'),
        (${m.id}, 'us', true, now() - interval '2 minutes', now() - interval '2 minutes' + interval '1 second')`;
    const read = (await api('GET', `/monitors/${m.id}`)).body.data;
    assert.match(read.last_checked, /^(1 minute|2 minutes) ago$/);
    const listed = (await api('GET', `/monitors?project_id=${ada.project_id}&per_page=100`)).body.data.find(
      (x: { id: string }) => x.id === m.id,
    );
    assert.equal(listed.last_checked, read.last_checked);
  });
});
