import type { Db, Sql } from '../platform/db/sql.ts';

/** The escalation integrations of the project of the row (ADR 0032), as a column. */
const escalationIds = (sql: Db) =>
  sql`coalesce((select array_agg(e.integration_id order by e.integration_id) from escalation_integrations e where e.project_id = projects.id), '{}') as escalation_integration_ids`;
import { formatTimestamp } from '../platform/http/time.ts';
import { offsetOf, type PageQuery } from '../platform/http/pagination.ts';
import type { Organization, Project } from './schemas.ts';

interface ProjectRow {
  id: string;
  organization_id: string;
  name: string;
  description: string;
  alert_group_seconds: number | null;
  renotify_minutes: number | null;
  escalate_after_minutes: number | null;
  escalation_integration_ids: string[];
  created_at: string;
  updated_at: string;
}

const toProject = (r: ProjectRow): Project => ({
  id: r.id,
  organization_id: r.organization_id,
  name: r.name,
  description: r.description,
  alert_group_seconds: r.alert_group_seconds,
  renotify_minutes: r.renotify_minutes,
  escalate_after_minutes: r.escalate_after_minutes,
  escalation_integration_ids: r.escalation_integration_ids,
  created_at: formatTimestamp(r.created_at),
  updated_at: formatTimestamp(r.updated_at),
});

export async function listProjects(
  sql: Sql,
  organizationIds: readonly string[],
  page: PageQuery,
): Promise<{ items: Project[]; total: number }> {
  const rows = await sql<(ProjectRow & { total: number })[]>`
    select *, ${escalationIds(sql)}, count(*) over ()::int as total from projects
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
    select *, ${escalationIds(sql)} from projects where id = ${id} and organization_id = any(${sql.array([...organizationIds])}::uuid[])`;
  return row && toProject(row);
}

export async function insertProject(
  sql: Sql,
  p: {
    organization_id: string;
    name: string;
    description: string;
    alert_group_seconds?: number | null | undefined;
    renotify_minutes?: number | null | undefined;
    escalate_after_minutes?: number | null | undefined;
  },
): Promise<Project> {
  const [row] = await sql<ProjectRow[]>`
    insert into projects (organization_id, name, description, alert_group_seconds, renotify_minutes, escalate_after_minutes)
    values (${p.organization_id}, ${p.name}, ${p.description}, ${p.alert_group_seconds ?? null}, ${p.renotify_minutes ?? null},
      ${p.escalate_after_minutes ?? null})
    returning *, '{}'::uuid[] as escalation_integration_ids`;
  return toProject(row!);
}

/** What an update changes; a field left undefined is kept. */
export interface ProjectChanges {
  name?: string | undefined;
  description?: string | undefined;
  alert_group_seconds?: number | null | undefined;
  renotify_minutes?: number | null | undefined;
  escalate_after_minutes?: number | null | undefined;
  escalation_integration_ids?: string[] | undefined;
}

export async function updateProject(
  sql: Db,
  id: string,
  organizationIds: readonly string[],
  changes: ProjectChanges,
): Promise<Project | undefined> {
  const [row] = await sql<ProjectRow[]>`
    update projects set
      name = coalesce(${changes.name ?? null}, name),
      description = coalesce(${changes.description ?? null}, description),
      alert_group_seconds = ${changes.alert_group_seconds === undefined ? sql`alert_group_seconds` : changes.alert_group_seconds},
      renotify_minutes = ${changes.renotify_minutes === undefined ? sql`renotify_minutes` : changes.renotify_minutes},
      escalate_after_minutes = ${changes.escalate_after_minutes === undefined ? sql`escalate_after_minutes` : changes.escalate_after_minutes},
      updated_at = now()
    where id = ${id} and organization_id = any(${sql.array([...organizationIds])}::uuid[])
    returning *, ${escalationIds(sql)}`;
  return row && toProject(row);
}

/** Replaces the project's escalation integrations (ids already checked to be the project's). */
export async function replaceEscalation(sql: Db, projectId: string, ids: readonly string[]): Promise<void> {
  await sql`delete from escalation_integrations where project_id = ${projectId}`;
  if (ids.length > 0)
    await sql`
      insert into escalation_integrations (project_id, integration_id)
      select ${projectId}, unnest(${sql.array([...ids])}::uuid[]) on conflict do nothing`;
}

/** The positions of `ids` that are not integrations of the project. */
export async function foreignIntegrationPositions(sql: Db, projectId: string, ids: readonly string[]): Promise<number[]> {
  const rows = await sql<{ id: string }[]>`
    select id from integrations where project_id = ${projectId} and id = any(${sql.array([...ids])}::uuid[])`;
  const mine = new Set(rows.map((r) => r.id));
  return ids.flatMap((id, i) => (mine.has(id) ? [] : [i]));
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
