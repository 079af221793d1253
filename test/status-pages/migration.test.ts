import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadMigrations, migrate } from '../../control-plane/src/platform/db/migrate.ts';
import type { ApiContext } from '../../control-plane/src/platform/http/context.ts';
import { publicStatusPage } from '../../control-plane/src/status-pages/service.ts';
import { createTestDatabase, quietLog, type TestDatabase } from '../harness/db.ts';

/** Migration 0028 over the one status page a project could have before it. */
describe('status pages made before several per project', () => {
  let db: TestDatabase;
  let projectId: string;
  const slug = 'AbCdEfGhIjKlMnOpQrStUv';

  before(async () => {
    db = await createTestDatabase({ migrate: false });
    await migrate(
      db.sql,
      quietLog,
      loadMigrations().filter((m) => m.version < 28),
    );
    const [org] = await db.sql<{ id: string }[]>`insert into organizations (name) values ('Acme') returning id`;
    const [project] = await db.sql<
      { id: string }[]
    >`insert into projects (organization_id, name) values (${org!.id}, 'Acme shop') returning id`;
    projectId = project!.id;
    await db.sql`insert into monitors (project_id, name, url, valid_http_codes) values (${projectId}, 'Checkout', 'https://shop.example', '{200}')`;
    await db.sql`insert into status_pages (project_id, slug, created_at) values (${projectId}, ${slug}, '2026-01-02 03:04:05.123456+00')`;
    await migrate(db.sql, quietLog);
  });
  after(() => db.drop());

  it('keeps the page and its address, titled with the project name it showed, with no groups', async () => {
    const rows = await db.sql`select id, project_id, slug, title, description, created_at, updated_at from status_pages`;
    assert.equal(rows.length, 1);
    const [row] = rows;
    assert.match(row!.id, /^[0-9a-f-]{36}$/);
    assert.equal(row!.project_id, projectId);
    assert.equal(row!.slug, slug);
    assert.equal(row!.title, 'Acme shop');
    assert.equal(row!.description, '');
    assert.equal(row!.updated_at, row!.created_at);
    assert.equal((await db.sql`select count(*)::int as n from status_page_groups`)[0]!.n, 0);
  });

  it('still shows every monitor of the project at the old address', async () => {
    const ctx = { sql: db.sql, now: () => new Date(), config: { PUBLIC_URL: 'https://uptime.test' } } as unknown as ApiContext;
    const found = await publicStatusPage(ctx, slug);
    assert.ok(found);
    assert.equal(found.page.url, `https://uptime.test/status/${slug}`);
    assert.deepEqual(
      found.groups.map((g) => [g.name, g.components.map((c) => c.name)]),
      [['Services', ['Checkout']]],
    );
  });

  it('lets the project have a second page', async () => {
    await db.sql`insert into status_pages (project_id, slug, title) values (${projectId}, 'ZyXwVuTsRqPoNmLkJiHgFe', 'Internal')`;
    assert.equal((await db.sql`select count(*)::int as n from status_pages where project_id = ${projectId}`)[0]!.n, 2);
  });
});
