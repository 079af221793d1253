import type { Ping } from '../../../shared/src/contracts/pings.ts';
import { arrayLiteral, type Db, type Sql, type Statement } from '../db/sql.ts';
import { comparePings, parseSnapshot, type LoggedPing, type Snapshot } from '../heartbeats/history.ts';
import { toDate } from '../heartbeats/record.ts';
import { offsetOf, type PageQuery } from '../http/pagination.ts';

/** Pings kept per heartbeat; older ones are trimmed as new ones arrive. */
export const PING_LOG_SIZE = 100;

/** A heartbeat_pings row; received_at is Postgres text (microseconds kept). */
export interface PingRecord {
  kind: Ping['kind'];
  exit_code: number | null;
  received_at: string;
  region: string | null;
  source: string;
  method: Ping['method'];
  user_agent: string | null;
  body: string;
  body_size: number;
}

/** The ids among these (valid uuids, checked by the caller) that are heartbeats. */
export async function existingHeartbeats(sql: Sql, ids: readonly string[]): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`select id from heartbeats where id = any(${arrayLiteral(ids)}::uuid[])`;
  return rows.map((r) => r.id);
}

export async function heartbeatVisible(sql: Sql, id: string, projectIds: readonly string[]): Promise<boolean> {
  const rows = await sql`select 1 from heartbeats where id = ${id} and project_id = any(${sql.array([...projectIds])}::uuid[])`;
  return rows.length > 0;
}

/** Newest first. */
export async function listPings(sql: Sql, heartbeatId: string, page: PageQuery): Promise<{ rows: PingRecord[]; total: number }> {
  const rows = await sql<(PingRecord & { total: number })[]>`
    select kind, exit_code, received_at, region, source, method, user_agent, body, body_size, count(*) over ()::int as total
    from heartbeat_pings where heartbeat_id = ${heartbeatId}
    order by received_at desc, id desc
    limit ${page.per_page} offset ${offsetOf(page)}`;
  // An empty first page means no pings; past the end, the total needs a query of its own.
  const total =
    rows[0]?.total ??
    (page.page === 1 ? 0 : (await sql<{ n: number }[]>`select count(*)::int as n from heartbeat_pings where heartbeat_id = ${heartbeatId}`)[0]!.n);
  return { rows, total };
}

// Pings may come from any publisher on the stream: Postgres text cannot hold NUL.
const clean = <T extends string | null>(s: T): T => (s === null ? s : (s.replace(/\u0000/g, '\uFFFD') as T));

/** A ping to log: the stream's timestamp, and the rules' state right after it (null when not known yet). */
export interface PingEntry {
  ping: Ping;
  at: Date;
  after: Snapshot | null;
}

/**
 * Logs pings of heartbeats that exist (the caller holds their rows locked). Returns the ids of
 * the pings logged now: a ping whose id is already there was seen before and must change nothing.
 */
export async function insertPings(tx: Db, entries: readonly PingEntry[]): Promise<Set<string>> {
  if (entries.length === 0) return new Set();
  // One array per column: a few parameters whatever the number of pings (a multi-row insert
  // takes thirteen per row, and a batch of thousands nears Postgres's limit of 65,535).
  const col = (f: (e: PingEntry) => string | number | null) => arrayLiteral(entries.map((e) => { const v = f(e); return v === null ? null : String(v); }));
  const inserted = await tx<{ ping_id: string }[]>`
    insert into heartbeat_pings (heartbeat_id, ping_id, kind, exit_code, received_at, region, source, method, user_agent, body, body_size, at, state_after)
    select * from unnest(
      ${col((e) => e.ping.heartbeat_id)}::uuid[], ${col((e) => e.ping.id)}::uuid[], ${col((e) => e.ping.kind)}::text[],
      ${col((e) => e.ping.exit_code)}::smallint[], ${col((e) => e.ping.received_at)}::timestamptz[], ${col((e) => clean(e.ping.region))}::text[],
      ${col((e) => clean(e.ping.source))}::text[], ${col((e) => e.ping.method)}::text[], ${col((e) => clean(e.ping.user_agent))}::text[],
      ${col((e) => clean(e.ping.body))}::text[], ${col((e) => e.ping.body_size)}::int[], ${col((e) => e.at.toISOString())}::timestamptz[],
      ${col((e) => e.after && JSON.stringify(e.after))}::jsonb[])
    on conflict (ping_id) do nothing returning ping_id`;
  return new Set(inserted.map((r) => r.ping_id));
}

/** The heartbeat's logged pings (but those in `except`) that carry the stream's timestamp, in the rules' order. */
export async function pingHistory(tx: Db, heartbeatId: string, except: readonly string[] = []): Promise<LoggedPing[]> {
  const rows = await tx<{ ping_id: string; kind: Ping['kind']; at: string; state_after: unknown }[]>`
    select ping_id, kind, at, state_after from heartbeat_pings
    where heartbeat_id = ${heartbeatId} and at is not null and ping_id <> all(${arrayLiteral(except)}::uuid[])`;
  return rows.map((r) => ({ id: r.ping_id, kind: r.kind, at: toDate(r.at)!, after: parseSnapshot(r.state_after) })).sort(comparePings);
}

/** Stores the states a merged history gives the pings. */
export async function writeSnapshots(tx: Db, snapshots: readonly { id: string; after: Snapshot }[]): Promise<void> {
  if (snapshots.length === 0) return;
  await tx`
    update heartbeat_pings p set state_after = e->'after'
    from jsonb_array_elements(${tx.json(snapshots as never)}) as e
    where p.ping_id = (e->>'id')::uuid`;
}

/** The statement that keeps the newest `keep` pings of each of these heartbeats. */
export function pingsTrim(tx: Db, heartbeatIds: readonly string[], keep = PING_LOG_SIZE): Statement {
  return tx`
    delete from heartbeat_pings p
    using (
      select c.heartbeat_id, c.received_at, c.id
      from unnest(${arrayLiteral(heartbeatIds)}::uuid[]) as h(id)
      cross join lateral (
        select q.heartbeat_id, q.received_at, q.id from heartbeat_pings q
        where q.heartbeat_id = h.id
        order by q.received_at desc, q.id desc
        offset ${keep} limit 1) c
    ) cut
    where p.heartbeat_id = cut.heartbeat_id and (p.received_at, p.id) <= (cut.received_at, cut.id)`;
}
