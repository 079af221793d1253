import type { Ping } from '../../../../shared/src/contracts/pings.ts';
import { arrayLiteral, type Db, type Sql, type Statement } from '../../platform/db/sql.ts';
import { comparePings, parseSnapshot, type LoggedPing, type PingSnapshot, type Snapshot } from '../history.ts';
import { judgeContent, type ContentSettings } from '../output.ts';
import { storedRuns, toDate } from '../record.ts';
import type { FailureReason, PingJudgement } from '../state.ts';
import { offsetOf, type PageQuery } from '../../platform/http/pagination.ts';

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
  rid: string | null;
  outcome: 'success' | 'fail' | null;
  reason: FailureReason | null;
  /** bigint as text. */
  duration_ms: string | null;
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
    select kind, exit_code, received_at, region, source, method, user_agent, body, body_size, rid, outcome, reason, duration_ms,
      count(*) over ()::int as total
    from heartbeat_pings where heartbeat_id = ${heartbeatId}
    order by received_at desc, id desc
    limit ${page.per_page} offset ${offsetOf(page)}`;
  // An empty first page means no pings; past the end, the total needs a query of its own.
  const total =
    rows[0]?.total ??
    (page.page === 1
      ? 0
      : (await sql<{ n: number }[]>`select count(*)::int as n from heartbeat_pings where heartbeat_id = ${heartbeatId}`)[0]!.n);
  return { rows, total };
}

// Pings may come from any publisher on the stream: Postgres text cannot hold NUL.
// eslint-disable-next-line no-control-regex -- NUL is the character looked for
const clean = <T extends string | null>(s: T): T => (s === null ? s : (s.replace(/\u0000/g, '\uFFFD') as T));

/**
 * A ping to log: the stream's timestamp, the rules' state right after it and how they judged it
 * (null when not known yet).
 */
export interface PingEntry {
  ping: Ping;
  at: Date;
  after: Snapshot | null;
  judgement?: PingJudgement | null;
}

/**
 * Logs pings of heartbeats that exist (the caller holds their rows locked). Returns the ids of
 * the pings logged now: a ping whose id is already there was seen before and must change nothing.
 */
export async function insertPings(tx: Db, entries: readonly PingEntry[]): Promise<Set<string>> {
  if (entries.length === 0) return new Set();
  // One array per column: a few parameters whatever the number of pings (a multi-row insert
  // takes thirteen per row, and a batch of thousands nears Postgres's limit of 65,535). Columns
  // that hold uuids, names, numbers and ISO instants (validated on receipt) need no quoting; the
  // state after each ping goes as its fields and is built into jsonb by Postgres.
  const n = entries.length;
  const cols = {
    hb: new Array<string>(n),
    id: new Array<string>(n),
    kind: new Array<string>(n),
    code: new Array<string>(n),
    received: new Array<string>(n),
    method: new Array<string>(n),
    size: new Array<string>(n),
    at: new Array<string>(n),
    rid: new Array<string>(n),
    outcome: new Array<string>(n),
    reason: new Array<string>(n),
    duration: new Array<string>(n),
  };
  const snap = {
    status: new Array<string>(n),
    next: new Array<string>(n),
    last: new Array<string>(n),
    lastKind: new Array<string>(n),
    started: new Array<string>(n),
    down: new Array<string>(n),
    lastSuccess: new Array<string>(n),
    failed: new Array<string>(n),
  };
  const texts = {
    region: new Array<string | null>(n),
    source: new Array<string>(n),
    agent: new Array<string | null>(n),
    body: new Array<string>(n),
    runs: new Array<string | null>(n),
  };
  const iso = (d: Date | null) => (d ? d.toISOString() : 'NULL');
  for (let i = 0; i < n; i++) {
    const { ping: p, at, after, judgement } = entries[i]!;
    cols.hb[i] = p.heartbeat_id;
    cols.id[i] = p.id;
    cols.kind[i] = p.kind;
    cols.code[i] = p.exit_code === null ? 'NULL' : String(p.exit_code);
    cols.received[i] = p.received_at;
    cols.method[i] = p.method;
    cols.size[i] = String(p.body_size);
    cols.at[i] = at.toISOString();
    cols.rid[i] = p.rid ?? 'NULL';
    cols.outcome[i] = judgement?.outcome ?? 'NULL';
    cols.reason[i] = judgement?.reason ?? 'NULL';
    cols.duration[i] = judgement?.duration_ms == null ? 'NULL' : String(judgement.duration_ms);
    snap.status[i] = after ? after.status : 'NULL';
    snap.next[i] = after ? iso(after.next_ping_at) : 'NULL';
    snap.last[i] = after ? iso(after.last_ping_at) : 'NULL';
    snap.lastKind[i] = after?.last_ping_kind ?? 'NULL';
    snap.started[i] = after ? iso(after.started_at) : 'NULL';
    snap.down[i] = after ? iso(after.down_since) : 'NULL';
    snap.lastSuccess[i] = after ? iso(after.last_success_at) : 'NULL';
    snap.failed[i] = after ? String(after.failed_runs) : 'NULL';
    texts.runs[i] = after && after.runs.length > 0 ? JSON.stringify(storedRuns(after.runs)) : null;
    texts.region[i] = clean(p.region);
    texts.source[i] = clean(p.source);
    texts.agent[i] = clean(p.user_agent);
    texts.body[i] = clean(p.body);
  }
  const plain = (values: string[]) => `{${values.join(',')}}`;
  const inserted = await tx<{ ping_id: string }[]>`
    insert into heartbeat_pings (heartbeat_id, ping_id, kind, exit_code, received_at, region, source, method, user_agent, body, body_size, at,
      rid, outcome, reason, duration_ms, state_after)
    select heartbeat_id, ping_id, kind, exit_code, received_at, region, source, method, user_agent, body, body_size, at,
      rid, outcome, reason, duration_ms,
      case when status is null then null else jsonb_build_object(
        'status', status, 'next_ping_at', next_ping_at, 'last_ping_at', last_ping_at,
        'last_ping_kind', last_ping_kind, 'started_at', started_at, 'down_since', down_since,
        'runs', coalesce(runs::jsonb, '[]'), 'last_success_at', last_success_at, 'failed_runs', failed_runs) end
    from unnest(
      ${plain(cols.hb)}::uuid[], ${plain(cols.id)}::uuid[], ${plain(cols.kind)}::text[], ${plain(cols.code)}::smallint[],
      ${plain(cols.received)}::timestamptz[], ${arrayLiteral(texts.region)}::text[], ${arrayLiteral(texts.source)}::text[],
      ${plain(cols.method)}::text[], ${arrayLiteral(texts.agent)}::text[], ${arrayLiteral(texts.body)}::text[], ${plain(cols.size)}::int[],
      ${plain(cols.at)}::timestamptz[], ${plain(cols.rid)}::uuid[], ${plain(cols.outcome)}::text[], ${plain(cols.reason)}::text[],
      ${plain(cols.duration)}::bigint[], ${plain(snap.status)}::text[], ${plain(snap.next)}::text[], ${plain(snap.last)}::text[],
      ${plain(snap.lastKind)}::text[], ${plain(snap.started)}::text[], ${plain(snap.down)}::text[], ${arrayLiteral(texts.runs)}::text[],
      ${plain(snap.lastSuccess)}::text[], ${plain(snap.failed)}::int[])
      as v(heartbeat_id, ping_id, kind, exit_code, received_at, region, source, method, user_agent, body, body_size, at,
        rid, outcome, reason, duration_ms, status, next_ping_at, last_ping_at, last_ping_kind, started_at, down_since,
        runs, last_success_at, failed_runs)
    on conflict (ping_id) do nothing returning ping_id`;
  return new Set(inserted.map((r) => r.ping_id));
}

/**
 * The heartbeat's logged pings (but those in `except`) that carry the stream's timestamp, in the
 * rules' order, each of the kind its content makes it under the heartbeat's current settings.
 */
export async function pingHistory(
  tx: Db,
  heartbeatId: string,
  settings: ContentSettings,
  except: readonly string[] = [],
): Promise<LoggedPing[]> {
  const rows = await tx<
    { ping_id: string; kind: Ping['kind']; exit_code: number | null; body: string; rid: string | null; at: string; state_after: unknown }[]
  >`
    select ping_id, kind, exit_code, body, rid, at, state_after from heartbeat_pings
    where heartbeat_id = ${heartbeatId} and at is not null and ping_id <> all(${arrayLiteral(except)}::uuid[])`;
  return rows
    .map((r) => {
      const content = judgeContent(settings, r);
      return {
        id: r.ping_id,
        kind: content.kind,
        reason: content.reason,
        rid: r.rid,
        at: toDate(r.at)!,
        after: parseSnapshot(r.state_after),
      };
    })
    .sort(comparePings);
}

/** Stores the states a merged history gives the pings, and how it judges them. */
export async function writeSnapshots(tx: Db, snapshots: readonly PingSnapshot[]): Promise<void> {
  if (snapshots.length === 0) return;
  const stored = snapshots.map((s) => ({
    id: s.id,
    after: { ...s.after, runs: storedRuns(s.after.runs) },
    outcome: s.judgement?.outcome ?? null,
    reason: s.judgement?.reason ?? null,
    duration_ms: s.judgement?.duration_ms ?? null,
  }));
  await tx`
    update heartbeat_pings p set state_after = e->'after', outcome = e->>'outcome', reason = e->>'reason',
      duration_ms = (e->>'duration_ms')::bigint
    from jsonb_array_elements(${tx.json(stored as never)}) as e
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
