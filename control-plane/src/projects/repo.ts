import type { Sql } from '../platform/db/sql.ts';
import { formatTimestamp } from '../platform/http/time.ts';
import { offsetOf, type PageQuery } from '../platform/http/pagination.ts';
import type { Organization, Project } from './schemas.ts';

interface ProjectRow {
  id: string;
  organization_id: string;
  name: string;
  description: string;
  alert_group_seconds: number | null;
  created_at: string;
  updated_at: string;
}

const toProject = (r: ProjectRow): Project => ({
  id: r.id,
  organization_id: r.organization_id,
  name: r.name,
  description: r.description,
  alert_group_seconds: r.alert_group_seconds,
  created_at: formatTimestamp(r.created_at),
  updated_at: formatTimestamp(r.updated_at),
});

export async function listProjects(
  sql: Sql,
  organizationIds: readonly string[],
  page: PageQuery,
): Promise<{ items: Project[]; total: number }> {
  const rows = await sql<(ProjectRow & { total: number })[]>`
    select *, count(*) over ()::int as total from projects
    where organization_id = any(${sql.array([...organizationIds])}::uuid[])
    order by created_at, id
    limit ${page.per_page} offset ${offsetOf(page)}`;
  const total = rows[0]?.total ?? (await countProjects(sql, organizationIds));
  return { items: rows.map(toProject), total };
}

async function countProjects(sql: Sql, organizationIds: readonly string[]): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from projects where organization_id = any(${sql.array([...organizationIds])}::uuid[])`;
  return row!.n;
}

export async function findProject(sql: Sql, id: string, organizationIds: readonly string[]): Promise<Project | undefined> {
  const [row] = await sql<ProjectRow[]>`
    select * from projects where id = ${id} and organization_id = any(${sql.array([...organizationIds])}::uuid[])`;
  return row && toProject(row);
}

export async function insertProject(
  sql: Sql,
  p: { organization_id: string; name: string; description: string; alert_group_seconds?: number | null | undefined },
): Promise<Project> {
  const [row] = await sql<ProjectRow[]>`
    insert into projects (organization_id, name, description, alert_group_seconds)
    values (${p.organization_id}, ${p.name}, ${p.description}, ${p.alert_group_seconds ?? null})
    returning *`;
  return toProject(row!);
}

/** What an update changes; a field left undefined is kept. */
export interface ProjectChanges {
  name?: string | undefined;
  description?: string | undefined;
  alert_group_seconds?: number | null | undefined;
}

export async function updateProject(
  sql: Sql,
  id: string,
  organizationIds: readonly string[],
  changes: ProjectChanges,
): Promise<Project | undefined> {
  const [row] = await sql<ProjectRow[]>`
    update projects set
      name = coalesce(${changes.name ?? null}, name),
      description = coalesce(${changes.description ?? null}, description),
      alert_group_seconds = ${changes.alert_group_seconds === undefined ? sql`alert_group_seconds` : changes.alert_group_seconds},
      updated_at = now()
    where id = ${id} and organization_id = any(${sql.array([...organizationIds])}::uuid[])
    returning *`;
  return row && toProject(row);
}

export async function deleteProject(sql: Sql, id: string, organizationIds: readonly string[]): Promise<boolean> {
  const rows = await sql`
    delete from projects where id = ${id} and organization_id = any(${sql.array([...organizationIds])}::uuid[]) returning id`;
  return rows.length > 0;
}

export async function listOrganizations(sql: Sql, userId: string, page: PageQuery): Promise<{ items: Organization[]; total: number }> {
  const rows = await sql<(Omit<Organization, 'role'> & { role: 'owner' | 'member'; total: number })[]>`
    select o.id, o.name, m.role, o.created_at, o.updated_at, count(*) over ()::int as total
    from organizations o join memberships m on m.organization_id = o.id
    where m.user_id = ${userId}
    order by o.created_at, o.id
    limit ${page.per_page} offset ${offsetOf(page)}`;
  const total = rows[0]?.total ?? (await sql<{ n: number }[]>`select count(*)::int as n from memberships where user_id = ${userId}`)[0]!.n;
  return {
    items: rows.map((r) => ({
      id: r.id,
      name: r.name,
      role: r.role,
      created_at: formatTimestamp(r.created_at),
      updated_at: formatTimestamp(r.updated_at),
    })),
    total,
  };
}

export interface ProjectChoiceRow {
  id: string;
  name: string;
  organization_id: string;
  organization_name: string;
  role: 'owner' | 'member';
}

/** Every project of the user's organizations, with the user's role there, oldest organization and project first. */
export async function listProjectChoices(sql: Sql, userId: string): Promise<ProjectChoiceRow[]> {
  return sql<ProjectChoiceRow[]>`
    select p.id, p.name, o.id as organization_id, o.name as organization_name, m.role
    from memberships m
    join organizations o on o.id = m.organization_id
    join projects p on p.organization_id = o.id
    where m.user_id = ${userId}
    order by o.created_at, o.id, p.created_at, p.id`;
}
