import type { Db } from '../../platform/db/sql.ts';

/** What integrations are linked to: a monitor, a heartbeat or a trigger. */
export type LinkOwner = { kind: 'monitor' | 'heartbeat' | 'trigger'; id: string };

const linkTables = {
  monitor: { table: 'monitor_integrations', column: 'monitor_id' },
  heartbeat: { table: 'heartbeat_integrations', column: 'heartbeat_id' },
  trigger: { table: 'trigger_integrations', column: 'trigger_id' },
} as const;

/** The ids among `wanted` that are not integrations of the project. */
export async function foreignIntegrations(db: Db, projectId: string, wanted: readonly string[]): Promise<string[]> {
  if (wanted.length === 0) return [];
  const rows = await db<{ id: string }[]>`
    select id from integrations where project_id = ${projectId} and id = any(${db.array([...wanted])}::uuid[])`;
  const known = new Set(rows.map((r) => r.id));
  return wanted.filter((id) => !known.has(id));
}

/** Replaces the owner's linked integrations with `ids` (duplicates collapse). */
export async function replaceLinks(db: Db, owner: LinkOwner, ids: readonly string[]): Promise<void> {
  const { table, column } = linkTables[owner.kind];
  await db`delete from ${db(table)} where ${db(column)} = ${owner.id}`;
  if (ids.length === 0) return;
  const rows = [...new Set(ids)].map((integration_id) => ({ [column]: owner.id, integration_id }));
  await db`insert into ${db(table)} ${db(rows)}`;
}
