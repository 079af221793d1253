import type { Sql } from '../platform/db/sql.ts';
import type { WebSession } from '../accounts/sessions.ts';
import { listProjectChoices } from './repo.ts';

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
  const rows = await listProjectChoices(sql, session.userId);
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
