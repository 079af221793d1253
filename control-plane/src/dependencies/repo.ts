import { arrayLiteral, type Db } from '../platform/db/sql.ts';
import type { SubjectRef } from './rules.ts';

/** Replaces the parents of a child, in the caller's transaction. */
export async function replaceParents(tx: Db, projectId: string, child: SubjectRef, parents: readonly SubjectRef[]): Promise<void> {
  await tx`delete from dependencies where child_id = ${child.id}`;
  if (parents.length === 0) return;
  await tx`
    insert into dependencies ${tx(
      parents.map((p, position) => ({
        project_id: projectId,
        child_monitor_id: child.type === 'monitor' ? child.id : null,
        child_heartbeat_id: child.type === 'heartbeat' ? child.id : null,
        parent_monitor_id: p.type === 'monitor' ? p.id : null,
        parent_heartbeat_id: p.type === 'heartbeat' ? p.id : null,
        position,
      })),
    )}`;
}

/** The parents of these children, in the order they were given, by child id. */
export async function parentsOf(db: Db, childIds: readonly string[]): Promise<Map<string, SubjectRef[]>> {
  const out = new Map<string, SubjectRef[]>();
  if (childIds.length === 0) return out;
  const rows = await db<{ child_id: string; id: string; type: 'monitor' | 'heartbeat' }[]>`
    select child_id, parent_id as id, case when parent_monitor_id is not null then 'monitor' else 'heartbeat' end as type
    from dependencies where child_id = any(${arrayLiteral(childIds)}::uuid[])
    order by child_id, position`;
  for (const r of rows) {
    const list = out.get(r.child_id) ?? [];
    list.push({ type: r.type, id: r.id });
    out.set(r.child_id, list);
  }
  return out;
}

/** Every edge of a project, child id -> parent ids (for the cycle rule). */
export async function projectEdges(db: Db, projectId: string): Promise<Map<string, string[]>> {
  const rows = await db<{ child_id: string; parent_id: string }[]>`
    select child_id, parent_id from dependencies where project_id = ${projectId}`;
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.child_id, [...(out.get(r.child_id) ?? []), r.parent_id]);
  return out;
}

/** The refs that are not a monitor or heartbeat (of the type given) of this project. */
export async function unknownRefs(db: Db, projectId: string, refs: readonly SubjectRef[]): Promise<Set<string>> {
  if (refs.length === 0) return new Set();
  const monitors = refs.filter((r) => r.type === 'monitor').map((r) => r.id);
  const heartbeats = refs.filter((r) => r.type === 'heartbeat').map((r) => r.id);
  const rows = await db<{ id: string }[]>`
    select id from monitors where project_id = ${projectId} and id = any(${arrayLiteral(monitors)}::uuid[])
    union all
    select id from heartbeats where project_id = ${projectId} and id = any(${arrayLiteral(heartbeats)}::uuid[])`;
  const known = new Set(rows.map((r) => r.id));
  return new Set(refs.filter((r) => !known.has(r.id)).map((r) => r.id));
}

/** Which of these subjects have parents. */
export async function withParents(db: Db, subjectIds: readonly string[]): Promise<Set<string>> {
  if (subjectIds.length === 0) return new Set();
  const rows = await db<{ child_id: string }[]>`
    select distinct child_id from dependencies where child_id = any(${arrayLiteral(subjectIds)}::uuid[])`;
  return new Set(rows.map((r) => r.child_id));
}

/** A parent as the dependency rule's wait reads it. */
export interface ParentRow {
  id: string;
  type: 'monitor' | 'heartbeat';
  interval_seconds: number | null;
  confirm_down: number | null;
  /** A heartbeat parent is down now (active and down). */
  heartbeat_down: boolean;
}

/** The parents of a child, in their order. */
export async function parentRows(db: Db, childId: string): Promise<ParentRow[]> {
  const rows = await db<ParentRow[]>`
    select d.parent_id as id, case when d.parent_monitor_id is not null then 'monitor' else 'heartbeat' end as type,
      m.interval_seconds, m.confirm_down, coalesce(h.status = 'down' and h.active, false) as heartbeat_down
    from dependencies d
    left join monitors m on m.id = d.parent_monitor_id
    left join heartbeats h on h.id = d.parent_heartbeat_id
    where d.child_id = ${childId}
    order by d.position`;
  return rows;
}

/**
 * The incident of each monitor parent of a child that overlaps [from, until] (an outage of the
 * parent around the child's down): the open one if there is one, else the latest. A paused
 * parent has none.
 */
export async function parentIncidents(
  db: Db,
  childId: string,
  from: Date,
  until: Date,
): Promise<Map<string, { id: string; open: boolean }>> {
  const rows = await db<{ parent_id: string; id: string; open: boolean }[]>`
    select d.parent_id, i.id, i.ended_at is null as open
    from dependencies d
    join monitors m on m.id = d.parent_monitor_id and m.active
    cross join lateral (
      select id, ended_at from incidents
      where monitor_id = d.parent_monitor_id and started_at <= ${until} and (ended_at is null or ended_at > ${from})
      order by ended_at is null desc, started_at desc limit 1
    ) i
    where d.child_id = ${childId}`;
  return new Map(rows.map((r) => [r.parent_id, { id: r.id, open: r.open }]));
}

/** When a heartbeat parent came up again: its last ping while it is not down (null while down). */
export async function heartbeatUpAt(db: Db, heartbeatId: string): Promise<string | null> {
  const [row] = await db<
    { at: string | null }[]
  >`select case when status <> 'down' then last_ping_at end as at from heartbeats where id = ${heartbeatId}`;
  return row?.at ?? null;
}

/** When an incident ended (null while open or unknown). */
export async function incidentEnd(db: Db, incidentId: string): Promise<string | null> {
  const [row] = await db<{ ended_at: string | null }[]>`select ended_at from incidents where id = ${incidentId}`;
  return row?.ended_at ?? null;
}

/** A monitor child's interval and up confirmation (null for a heartbeat or a deleted monitor). */
export async function childTiming(db: Db, childId: string): Promise<{ interval_seconds: number; confirm_up: number } | null> {
  const [row] = await db<{ interval_seconds: number; confirm_up: number }[]>`
    select interval_seconds, confirm_up from monitors where id = ${childId}`;
  return row ?? null;
}

/** The project's monitors and heartbeats by name (what a dependency may point at), up to `limit` of each. */
export async function projectSubjects(db: Db, projectId: string, limit: number): Promise<(SubjectRef & { name: string })[]> {
  return db<(SubjectRef & { name: string })[]>`
    (select 'monitor' as type, id, name from monitors where project_id = ${projectId} order by lower(name), id limit ${limit})
    union all
    (select 'heartbeat' as type, id, name from heartbeats where project_id = ${projectId} order by lower(name), id limit ${limit})`;
}
