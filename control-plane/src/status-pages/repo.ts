import type { Sql } from '../platform/db/sql.ts';
import { randomToken } from '../accounts/sessions.ts';

/** 128 random bits: a status page is public to whoever has the address, and to no one else. */
const newSlug = () => randomToken().slice(0, 22);

export async function statusPageSlug(sql: Sql, projectId: string): Promise<string | null> {
  const [row] = await sql<{ slug: string }[]>`select slug from status_pages where project_id = ${projectId}`;
  return row?.slug ?? null;
}

export async function enableStatusPage(sql: Sql, projectId: string): Promise<string> {
  await sql`insert into status_pages (project_id, slug) values (${projectId}, ${newSlug()}) on conflict (project_id) do nothing`;
  return (await statusPageSlug(sql, projectId))!;
}

/** A new address; the old one stops working. */
export async function regenerateStatusPage(sql: Sql, projectId: string): Promise<void> {
  await sql`update status_pages set slug = ${newSlug()} where project_id = ${projectId}`;
}

export async function disableStatusPage(sql: Sql, projectId: string): Promise<void> {
  await sql`delete from status_pages where project_id = ${projectId}`;
}

export async function findStatusPage(sql: Sql, slug: string): Promise<{ project_id: string; name: string } | undefined> {
  const [row] = await sql<{ project_id: string; name: string }[]>`
    select s.project_id, p.name from status_pages s join projects p on p.id = s.project_id where s.slug = ${slug}`;
  return row;
}
