import { requireOrganization, type Principal } from '../accounts/bearer.ts';
import type { Sql } from '../platform/db/sql.ts';
import { AppError, notFound } from '../platform/errors.ts';
import type { PageQuery } from '../platform/http/pagination.ts';
import { policyChanged } from '../alerts/service.ts';
import * as repo from './repo.ts';
import type { Organization, Project } from './schemas.ts';

export async function listOrganizations(sql: Sql, p: Principal, page: PageQuery): Promise<{ items: Organization[]; total: number }> {
  return repo.listOrganizations(sql, p.userId, page);
}

/** The projects of one of the principal's organizations, or of all of them. */
export async function listProjects(
  sql: Sql,
  p: Principal,
  organizationId: string | undefined,
  page: PageQuery,
): Promise<{ items: Project[]; total: number }> {
  if (organizationId) requireOrganization(p, organizationId);
  return repo.listProjects(sql, organizationId ? [organizationId] : [...p.organizationIds], page);
}

export async function getProject(sql: Sql, p: Principal, id: string): Promise<Project> {
  const project = await repo.findProject(sql, id, [...p.organizationIds]);
  if (!project) throw notFound();
  return project;
}

/** In the organization given, else the first the principal owns, else the first they belong to. */
export async function createProject(
  sql: Sql,
  p: Principal,
  input: {
    organization_id?: string | undefined;
    name: string;
    description: string;
    alert_group_seconds?: number | null | undefined;
    renotify_minutes?: number | null | undefined;
    escalate_after_minutes?: number | null | undefined;
  },
): Promise<Project> {
  const organizationId = input.organization_id ?? defaultOrganization(p);
  requireOrganization(p, organizationId);
  return repo.insertProject(sql, {
    organization_id: organizationId,
    name: input.name,
    description: input.description,
    alert_group_seconds: input.alert_group_seconds,
    renotify_minutes: input.renotify_minutes,
    escalate_after_minutes: input.escalate_after_minutes,
  });
}

/** Updates a project; a change of its response policy has its open alerts judged again by the new one. */
export async function updateProject(sql: Sql, p: Principal, id: string, changes: repo.ProjectChanges): Promise<Project> {
  return sql.begin(async (tx) => {
    if (changes.escalation_integration_ids !== undefined) {
      const visible = await repo.findProject(sql, id, [...p.organizationIds]);
      if (!visible) throw notFound();
      const foreign = await repo.foreignIntegrationPositions(tx, id, changes.escalation_integration_ids);
      if (foreign.length > 0) {
        const errors = Object.fromEntries(
          foreign.map((i) => [
            `escalation_integration_ids.${i}`,
            [`The selected escalation_integration_ids.${i} is not an integration of this project.`],
          ]),
        );
        throw new AppError('VALIDATION', Object.values(errors)[0]![0], errors);
      }
      await repo.replaceEscalation(tx, id, changes.escalation_integration_ids);
    }
    const project = await repo.updateProject(tx, id, [...p.organizationIds], changes);
    if (!project) throw notFound();
    if (
      changes.renotify_minutes !== undefined ||
      changes.escalate_after_minutes !== undefined ||
      changes.escalation_integration_ids !== undefined
    )
      await policyChanged(tx, id);
    return project;
  });
}

/** Deletes a project and everything in it: organization owners only. */
export async function deleteProject(sql: Sql, p: Principal, id: string): Promise<void> {
  const project = await getProject(sql, p, id);
  if (!p.ownedOrganizationIds.has(project.organization_id)) throw new AppError('FORBIDDEN');
  await repo.deleteProject(sql, id, [project.organization_id]);
}

function defaultOrganization(p: Principal): string {
  const first = [...p.ownedOrganizationIds][0] ?? [...p.organizationIds][0];
  if (!first)
    throw new AppError('VALIDATION', 'The organization_id field is required.', {
      organization_id: ['The organization_id field is required.'],
    });
  return first;
}
