import type { IntegrationType } from '../../../shared/src/contracts/notify.ts';
import type { Db, Sql } from '../platform/db/sql.ts';
import { offsetOf, type PageQuery } from '../platform/http/pagination.ts';

export type RatePeriod = 'second' | 'minute' | 'hour' | 'day';

export interface TriggerRow {
  id: string;
  project_id: string;
  name: string;
  default_message: string;
  token_protected: boolean;
  token_prefix: string | null;
  rate_limit_max: number | null;
  rate_limit_per: RatePeriod | null;
  active: boolean;
  fire_count: string;
  last_fired_at: string | null;
  created_at: string;
  updated_at: string;
  project_name: string;
  project_description: string;
  integration_ids: string[];
}

const inProjects = (sql: Sql, projectIds: readonly string[]): ReturnType<Sql> =>
  sql`t.project_id = any(${sql.array([...projectIds])}::uuid[])`;

function readQuery(sql: Sql, where: ReturnType<Sql>, page?: PageQuery) {
  return sql<(TriggerRow & { total?: number })[]>`
    select t.id, t.project_id, t.name, t.default_message, t.token_protected, t.token_prefix, t.rate_limit_max,
      t.rate_limit_per, t.active, t.fire_count::text, t.last_fired_at, t.created_at, t.updated_at,
      p.name as project_name, p.description as project_description,
      coalesce((select array_agg(ti.integration_id order by ti.integration_id) from trigger_integrations ti where ti.trigger_id = t.id), '{}') as integration_ids
      ${page ? sql`, count(*) over ()::int as total` : sql``}
    from triggers t join projects p on p.id = t.project_id
    where ${where}
    order by t.created_at, t.id
    ${page ? sql`limit ${page.per_page} offset ${offsetOf(page)}` : sql``}`;
}

export async function listTriggers(sql: Sql, projectIds: readonly string[], page: PageQuery) {
  const rows = await readQuery(sql, inProjects(sql, projectIds), page);
  const total =
    rows[0]?.total ?? (await sql<{ n: number }[]>`select count(*)::int as n from triggers t where ${inProjects(sql, projectIds)}`)[0]!.n;
  return { rows, total };
}

export async function findTrigger(sql: Sql, id: string, projectIds: readonly string[]): Promise<TriggerRow | undefined> {
  const [row] = await readQuery(sql, sql`t.id = ${id} and ${inProjects(sql, projectIds)}`);
  return row;
}

export interface TriggerWrite {
  name: string;
  default_message: string;
  token_protected: boolean;
  rate_limit_max: number | null;
  rate_limit_per: RatePeriod | null;
  active: boolean;
}

export async function insertTrigger(
  db: Db,
  projectId: string,
  w: TriggerWrite,
  token: { hash: Buffer; prefix: string } | null,
): Promise<string> {
  const [row] = await db<{ id: string }[]>`
    insert into triggers (project_id, name, default_message, token_protected, token_hash, token_prefix, rate_limit_max, rate_limit_per, active)
    values (${projectId}, ${w.name}, ${w.default_message}, ${w.token_protected}, ${token?.hash ?? null}, ${token?.prefix ?? null},
      ${w.rate_limit_max}, ${w.rate_limit_per}, ${w.active})
    returning id`;
  return row!.id;
}

export async function updateTrigger(db: Db, id: string, w: TriggerWrite): Promise<void> {
  await db`
    update triggers set name = ${w.name}, default_message = ${w.default_message}, token_protected = ${w.token_protected},
      rate_limit_max = ${w.rate_limit_max}, rate_limit_per = ${w.rate_limit_per}, active = ${w.active}, updated_at = now(),
      -- a changed limit starts counting afresh
      rate_window_start = case when rate_limit_max is distinct from ${w.rate_limit_max}::int
        or rate_limit_per is distinct from ${w.rate_limit_per}::text then null else rate_window_start end
    where id = ${id}`;
}

export async function setToken(sql: Sql, id: string, token: { hash: Buffer; prefix: string }): Promise<void> {
  await sql`update triggers set token_hash = ${token.hash}, token_prefix = ${token.prefix}, updated_at = now() where id = ${id}`;
}

export async function deleteTrigger(sql: Sql, id: string, projectIds: readonly string[]): Promise<boolean> {
  const rows = await sql`delete from triggers t where t.id = ${id} and ${inProjects(sql, projectIds)} returning t.id`;
  return rows.length > 0;
}

export interface FireTarget {
  id: string;
  project_id: string;
  project_name: string;
  name: string;
  default_message: string;
  token_protected: boolean;
  token_hash: Buffer | null;
}

/** What a call of the notify URL needs to know before it counts: no tenancy, the id is the address. */
export async function findFireTarget(sql: Sql, id: string): Promise<FireTarget | undefined> {
  const [row] = await sql<FireTarget[]>`
    select t.id, t.project_id, p.name as project_name, t.name, t.default_message, t.token_protected, t.token_hash
    from triggers t join projects p on p.id = t.project_id
    where t.id = ${id}`;
  return row;
}

/**
 * Counts one call against the rate limit and the fire counters. The limit is a fixed window (the
 * calendar second, minute, hour or day, UTC) kept in the row, so every control-plane process
 * counts into the same window. The row is locked first and the call's instant read after: calls
 * are counted in the order they hold the row, each at a moment no earlier than the last counted
 * call (the clock of a transaction that waited would be stale), so the window and last_fired_at
 * only move forward and a window never holds more than the limit. No row: the limit is reached
 * (or the trigger is gone).
 */
export async function countFire(tx: Db, id: string): Promise<{ active: boolean; fired_at: string } | undefined> {
  const [locked] = await tx`select 1 from triggers where id = ${id} for update`;
  if (!locked) return undefined;
  const [row] = await tx<{ active: boolean; fired_at: string }[]>`
    update triggers t set
      rate_window_start = c.window_start,
      rate_window_count = case
        when c.window_start is null then 0
        when t.rate_window_start = c.window_start then t.rate_window_count + 1
        else 1 end,
      fire_count = t.fire_count + 1,
      last_fired_at = c.at
    from (
      select s.at, case when s.per is null then null else date_trunc(s.per, s.at, 'UTC') end as window_start
      from (select greatest(clock_timestamp(), last_fired_at) as at, rate_limit_per as per from triggers where id = ${id}) s
    ) c
    where t.id = ${id}
      and (t.rate_limit_max is null
        or t.rate_window_start is distinct from c.window_start
        or t.rate_window_count < t.rate_limit_max)
    returning t.active, c.at as fired_at`;
  return row;
}

/** Whole seconds until the current window ends; undefined when the trigger no longer exists. */
export async function retryAfterSeconds(tx: Db, id: string): Promise<number | undefined> {
  const [row] = await tx<{ seconds: number }[]>`
    select greatest(1, ceil(extract(epoch from (
      coalesce(rate_window_start, clock_timestamp()) + ('1 ' || coalesce(rate_limit_per, 'second'))::interval - clock_timestamp()))))::int as seconds
    from triggers where id = ${id}`;
  return row?.seconds;
}

export async function activeIntegrationsOf(tx: Db, triggerId: string) {
  return tx<{ id: string; type: IntegrationType }[]>`
    select i.id, i.type from trigger_integrations ti join integrations i on i.id = ti.integration_id
    where ti.trigger_id = ${triggerId} and i.active
    order by i.created_at, i.id`;
}

export async function insertEvent(
  tx: Db,
  e: {
    trigger_id: string;
    message: string;
    outcome: string;
    integrations: number;
    source_address: string | null;
    user_agent: string | null;
    /** The instant the call was counted at, so the event and last_fired_at agree. */
    fired_at: string;
  },
): Promise<{ id: string; fired_at: string }> {
  const [row] = await tx<{ id: string; fired_at: string }[]>`
    insert into trigger_events ${tx(e)} returning id, fired_at`;
  return row!;
}

export interface TriggerEventRow {
  id: string;
  message: string;
  outcome: 'dispatched' | 'paused' | 'no_integrations';
  integrations: number;
  source_address: string | null;
  user_agent: string | null;
  fired_at: string;
  total?: number;
}

export async function listEvents(sql: Sql, triggerId: string, page: PageQuery) {
  const rows = await sql<TriggerEventRow[]>`
    select id, message, outcome, integrations, source_address, user_agent, fired_at, count(*) over ()::int as total
    from trigger_events where trigger_id = ${triggerId}
    order by fired_at desc, id desc
    limit ${page.per_page} offset ${offsetOf(page)}`;
  const total =
    rows[0]?.total ?? (await sql<{ n: number }[]>`select count(*)::int as n from trigger_events where trigger_id = ${triggerId}`)[0]!.n;
  return { rows, total };
}

/** Deletes up to `limit` trigger calls made before `cutoff` (retention); how many. */
export async function pruneCalls(sql: Sql, cutoff: string, limit: number): Promise<number> {
  const { count } = await sql`
    delete from trigger_events where ctid = any(array(
      select ctid from trigger_events where fired_at < ${cutoff} limit ${limit}))`;
  return count;
}
