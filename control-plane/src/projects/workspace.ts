import type { Sql } from '../platform/db/sql.ts';
import type { WebSession } from '../accounts/sessions.ts';

export interface ProjectChoice {
  id: string;
  name: string;
  organizationId: string;
  organizationName: string;
  role: 'owner' | 'member';
}

/** The projects a user can switch between, and the one the dashboard shows. */
export interface Workspace {
  projects: ProjectChoice[];
  current: ProjectChoice | null;
}

export async function loadWorkspace(sql: Sql, session: WebSession): Promise<Workspace> {
  const rows = await sql<{ id: string; name: string; organization_id: string; organization_name: string; role: 'owner' | 'member' }[]>`
    select p.id, p.name, o.id as organization_id, o.name as organization_name, m.role
    from memberships m
    join organizations o on o.id = m.organization_id
    join projects p on p.organization_id = o.id
    where m.user_id = ${session.userId}
    order by o.created_at, o.id, p.created_at, p.id`;
  const projects = rows.map((r) => ({
    id: r.id,
    name: r.name,
    organizationId: r.organization_id,
    organizationName: r.organization_name,
    role: r.role,
  }));
  // The chosen project, unless it went away (deleted, or the membership was removed).
  const current = projects.find((p) => p.id === session.projectId) ?? projects[0] ?? null;
  return { projects, current };
}
