import type { IntegrationType } from '../../../../shared/src/contracts/notify.ts';
import type { MessageTemplate } from '../templates.ts';
import type { Sql } from '../../platform/db/sql.ts';
import { offsetOf, type PageQuery } from '../../platform/http/pagination.ts';

export interface IntegrationRow {
  id: string;
  project_id: string;
  name: string;
  type: IntegrationType;
  active: boolean;
  config: Record<string, unknown>;
  secrets_sealed: string | null;
  template: MessageTemplate | null;
  created_at: string;
  updated_at: string;
  project_name: string;
  project_description: string;
  failures: number;
  failing_since: string | null;
  failing_alerted_at: string | null;
  last_failure: string | null;
}

const ids = (sql: Sql, projectIds: readonly string[]) => sql.array([...projectIds]);

export async function listIntegrations(sql: Sql, projectIds: readonly string[], page: PageQuery) {
  const rows = await sql<(IntegrationRow & { total: number })[]>`
    select i.*, p.name as project_name, p.description as project_description, count(*) over ()::int as total
    from integrations i join projects p on p.id = i.project_id
    where i.project_id = any(${ids(sql, projectIds)}::uuid[])
    order by i.created_at, i.id
    limit ${page.per_page} offset ${offsetOf(page)}`;
  const total =
    rows[0]?.total ??
    (await sql<{ n: number }[]>`select count(*)::int as n from integrations where project_id = any(${ids(sql, projectIds)}::uuid[])`)[0]!.n;
  return { rows, total };
}

export async function findIntegration(sql: Sql, id: string, projectIds: readonly string[]): Promise<IntegrationRow | undefined> {
  const [row] = await sql<IntegrationRow[]>`
    select i.*, p.name as project_name, p.description as project_description
    from integrations i join projects p on p.id = i.project_id
    where i.id = ${id} and i.project_id = any(${ids(sql, projectIds)}::uuid[])`;
  return row;
}

export interface IntegrationWrite {
  name: string;
  type: IntegrationType;
  active: boolean;
  config: Record<string, unknown>;
  secrets_sealed: string | null;
  template: MessageTemplate | null;
}

export async function insertIntegration(sql: Sql, projectId: string, w: IntegrationWrite): Promise<string> {
  const [row] = await sql<{ id: string }[]>`
    insert into integrations (project_id, name, type, active, config, secrets_sealed, template)
    values (${projectId}, ${w.name}, ${w.type}, ${w.active}, ${sql.json(w.config as never)}, ${w.secrets_sealed},
      ${w.template === null ? null : sql.json(w.template as never)})
    returning id`;
  return row!.id;
}

export async function updateIntegration(sql: Sql, id: string, w: IntegrationWrite): Promise<void> {
  await sql`
    update integrations set name = ${w.name}, active = ${w.active}, config = ${sql.json(w.config as never)},
      secrets_sealed = ${w.secrets_sealed}, template = ${w.template === null ? null : sql.json(w.template as never)}, updated_at = now()
    where id = ${id}`;
}

export async function deleteIntegration(sql: Sql, id: string, projectIds: readonly string[]): Promise<boolean> {
  const rows = await sql`delete from integrations where id = ${id} and project_id = any(${ids(sql, projectIds)}::uuid[]) returning id`;
  return rows.length > 0;
}

/** The ids among `wanted` that are not integrations of the project. */
export async function foreignIntegrations(sql: Sql, projectId: string, wanted: readonly string[]): Promise<string[]> {
  if (wanted.length === 0) return [];
  const rows = await sql<{ id: string }[]>`
    select id from integrations where project_id = ${projectId} and id = any(${sql.array([...wanted])}::uuid[])`;
  const known = new Set(rows.map((r) => r.id));
  return wanted.filter((id) => !known.has(id));
}
