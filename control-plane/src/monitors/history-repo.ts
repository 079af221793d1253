import type { z } from 'zod';
import type { AssertionOutcome, CheckDetails } from '../../../shared/src/contracts/checks.ts';
import { arrayLiteral, type Sql } from '../platform/db/sql.ts';
import { offsetOf, type PageQuery } from '../platform/http/pagination.ts';
import { formatTimestamp } from '../platform/http/time.ts';
import { causeKind, type CauseKind } from './cause-kind.ts';
import type { CheckResultView, IncidentView } from './schemas.ts';
import { uptimePercent } from './uptime.ts';

type ResultExtra = { assertions?: AssertionOutcome[]; details?: CheckDetails };

/** The optional fields of a result: present only when the check had them. */
function resultExtra(degraded: boolean | null, extra: ResultExtra | null) {
  return {
    ...(degraded ? { degraded: true } : {}),
    ...(extra?.assertions ? { assertions: extra.assertions } : {}),
    ...(extra?.details ? { details: extra.details } : {}),
  };
}

/** Recent checks of a monitor, newest first (history.ts checks the monitor is the caller's). */
export async function listResults(sql: Sql, monitorId: string, region: string | undefined, page: PageQuery) {
  const rows = await sql`
    select *, count(*) over ()::int as total from check_results
    where monitor_id = ${monitorId} ${region ? sql`and region = ${region}` : sql``}
    order by scheduled_at desc, region
    limit ${page.per_page} offset ${offsetOf(page)}`;
  const total =
    (rows[0]?.total as number | undefined) ??
    (
      await sql<
        { n: number }[]
      >`select count(*)::int as n from check_results where monitor_id = ${monitorId} ${region ? sql`and region = ${region}` : sql``}`
    )[0]!.n;
  const items: z.infer<typeof CheckResultView>[] = rows.map((r) => ({
    region: r.region as string,
    scheduled_at: formatTimestamp(r.scheduled_at as string),
    checked_at: formatTimestamp(r.checked_at as string),
    ok: r.ok as boolean,
    status_code: r.status_code as number | null,
    timings: { dns: r.dns_ms, connect: r.connect_ms, tls: r.tls_ms, ttfb: r.ttfb_ms, total: r.total_ms },
    error: r.error_class ? { class: r.error_class as string, message: (r.error_message as string | null) ?? '' } : null,
    attempts: r.attempts as number,
    agent_id: r.agent_id as string,
    ...resultExtra(r.degraded as boolean | null, r.extra as ResultExtra | null),
  }));
  return { items, total };
}

/**
 * A monitor's incidents, newest first: its outages (global, what its uptime counts), its
 * regional incidents (failing in some regions, fewer than the quorum) and its degraded periods
 * (up, but degraded), told apart by `scope`.
 */
export async function listIncidents(sql: Sql, monitorId: string, page: PageQuery, now: Date) {
  const ts = now.toISOString();
  const rows = await sql<
    {
      id: string;
      scope: 'global' | 'regional' | 'degraded';
      started_at: string;
      ended_at: string | null;
      duration: number;
      cause: string;
      regions: string[];
      evidence: z.infer<typeof IncidentView>['evidence'];
      dependents: z.infer<typeof IncidentView>['dependents'];
      joined: { incident_id: string; parent_id: string } | null;
      total: number;
    }[]
  >`
    select *, floor(extract(epoch from (coalesce(ended_at, ${ts}::timestamptz) - started_at)))::int as duration,
      count(*) over ()::int as total
    from (
      select id, 'global' as scope, started_at, ended_at, cause, regions, evidence,
        -- Dependency holds (ADR 0030): the monitors and heartbeats whose downs joined this outage,
        -- and the parent's outage this one joined.
        coalesce((select json_agg(json_build_object('type', h.subject_type, 'id', h.subject_id, 'name', h.payload #>> '{subject,name}',
                    'down_at', h.occurred_at, 'alert', h.status) order by h.occurred_at, h.subject_id)
                  from held_alerts h where h.parent_incident_id = incidents.id and h.reason = 'dependency'), '[]') as dependents,
        (select json_build_object('incident_id', h.parent_incident_id, 'parent_id', h.parent_id) from held_alerts h
          where h.subject_id = ${monitorId} and h.reason = 'dependency' and h.parent_id is not null
            and h.payload #>> '{data,incident_id}' = incidents.id::text
          limit 1) as joined
      from incidents where monitor_id = ${monitorId}
      union all
      select id, 'regional', started_at, ended_at, cause, regions, evidence, '[]'::json, null::json
      from regional_incidents where monitor_id = ${monitorId}
      union all
      select id, 'degraded', started_at, ended_at, cause, regions, '[]'::jsonb, '[]'::json, null::json
      from degraded_periods where monitor_id = ${monitorId}
    ) i
    order by started_at desc, id
    limit ${page.per_page} offset ${offsetOf(page)}`;
  const total =
    rows[0]?.total ??
    (
      await sql<{ n: number }[]>`
        select (select count(*) from incidents where monitor_id = ${monitorId})
          + (select count(*) from regional_incidents where monitor_id = ${monitorId})
          + (select count(*) from degraded_periods where monitor_id = ${monitorId}) as n`
    )[0]!.n;
  const items: z.infer<typeof IncidentView>[] = rows.map((r) => ({
    id: r.id,
    scope: r.scope,
    started_at: formatTimestamp(r.started_at),
    ended_at: formatTimestamp(r.ended_at),
    duration: Math.max(0, r.duration),
    cause: r.cause,
    regions: r.regions,
    evidence: r.evidence,
    dependents: r.dependents.map((d) => ({ ...d, down_at: formatTimestamp(d.down_at) })),
    joined: r.joined,
  }));
  return { items, total: Number(total) };
}

// Reads behind the dashboard's charts and the status page. The monitors are read within one
// project: ids of another project's monitors give nothing.

export interface SparkPoint {
  /** When the slot's checks were due (ISO). */
  at: string;
  /** Mean response time of the slot's successful checks; null when every region failed. */
  ms: number | null;
  /** Every region's check succeeded. */
  ok: boolean;
  /** Checks in the slot (one per region) and how many of them failed. */
  checks: number;
  failed: number;
}

export interface Series {
  name: string;
  /** ms: mean response time of the bucket's successful checks (null: none succeeded). */
  points: readonly { t: number; ms: number | null; failures: number }[];
}

export interface DayUptime {
  day: string;
  /** Percent, or null before the monitor existed. */
  uptime: number | null;
}

const epoch = (pg: string) => Date.parse(formatTimestamp(pg));

/** The latest check slots of each monitor (regions averaged per slot), oldest first, for sparklines and check bars. */
export async function sparklines(
  sql: Sql,
  projectId: string,
  monitorIds: readonly string[],
  now: Date,
  count = 40,
): Promise<Map<string, SparkPoint[]>> {
  const out = new Map<string, SparkPoint[]>();
  if (monitorIds.length === 0) return out;
  const since = new Date(now.getTime() - 24 * 3_600_000);
  // A failed check's time is its timeout, not a response time: it is a red dot, not part of the line.
  const rows = await sql<{ monitor_id: string; scheduled_at: string; ms: number | null; ok: boolean; checks: number; failed: number }[]>`
    select monitor_id, scheduled_at, (avg(total_ms) filter (where ok))::float8 as ms, bool_and(ok) as ok,
      count(*)::int as checks, (count(*) filter (where not ok))::int as failed
    from (
      select monitor_id, scheduled_at, total_ms, ok,
        dense_rank() over (partition by monitor_id order by scheduled_at desc) as rank
      from check_results
      where monitor_id in (select id from monitors where id = any(${sql.array([...monitorIds])}::uuid[]) and project_id = ${projectId})
        and scheduled_at > ${since}
    ) recent
    where rank <= ${count}
    group by monitor_id, scheduled_at
    order by monitor_id, scheduled_at`;
  for (const r of rows) {
    const list = out.get(r.monitor_id) ?? [];
    list.push({ at: formatTimestamp(r.scheduled_at), ms: r.ms, ok: r.ok, checks: r.checks, failed: r.failed });
    out.set(r.monitor_id, list);
  }
  return out;
}

/** The oldest and newest check slots of a monitor in the last 24 hours (ISO); null when none. */
export async function recentSpan(sql: Sql, monitorId: string, now: Date): Promise<{ oldest: string; newest: string } | null> {
  const since = new Date(now.getTime() - 24 * 3_600_000);
  const [row] = await sql<{ oldest: string | null; newest: string | null }[]>`
    select min(scheduled_at) as oldest, max(scheduled_at) as newest
    from check_results where monitor_id = ${monitorId} and scheduled_at > ${since} and scheduled_at <= ${now}`;
  return row?.oldest && row.newest ? { oldest: formatTimestamp(row.oldest), newest: formatTimestamp(row.newest) } : null;
}

export const chartRanges = {
  '1h': 3_600_000,
  '24h': 24 * 3_600_000,
  '7d': 7 * 24 * 3_600_000,
  '30d': 30 * 24 * 3_600_000,
} as const;
export type ChartRange = keyof typeof chartRanges;

/**
 * Response time per region over a range, in about 120 points: raw results averaged into
 * buckets up to a day back, hourly rollups beyond (raw results may be gone by then).
 */
export async function responseSeries(
  sql: Sql,
  monitorId: string,
  range: ChartRange,
  now: Date,
): Promise<{ series: Series[]; from: number; to: number }> {
  const to = now.getTime();
  const from = to - chartRanges[range];
  const since = new Date(from);
  let rows: { region: string; t: string; ms: number | null; failures: number }[];
  if (chartRanges[range] <= chartRanges['24h']) {
    const bucket = Math.max(30, Math.round(chartRanges[range] / 1000 / 120));
    rows = await sql`
      select region, to_timestamp(floor(extract(epoch from scheduled_at) / ${bucket}) * ${bucket}) as t,
        (avg(total_ms) filter (where ok))::float8 as ms, (count(*) filter (where not ok))::int as failures
      from check_results where monitor_id = ${monitorId} and scheduled_at > ${since}
      group by 1, 2 order by 2`;
  } else {
    const hours = range === '7d' ? 1 : 6;
    rows = await sql`
      select region, to_timestamp(floor(extract(epoch from hour) / ${hours * 3600}) * ${hours * 3600}) as t,
        (sum(total_ms_sum) / nullif(sum(checks), 0))::float8 as ms, sum(failures)::int as failures
      from check_rollups where monitor_id = ${monitorId} and hour > ${since}
      group by 1, 2 having sum(checks) > 0 order by 2`;
  }
  const byRegion = new Map<string, Series['points'][number][]>();
  for (const r of rows) {
    const list = byRegion.get(r.region) ?? [];
    list.push({ t: epoch(r.t), ms: r.ms, failures: r.failures });
    byRegion.set(r.region, list);
  }
  const series = [...byRegion.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([name, points]) => ({ name, points }));
  return { series, from, to };
}

/**
 * Uptime per UTC day over the last `days` days, from incidents (the same source as a monitor's
 * `uptime`): the share of the day, since the monitor was created and outside maintenance windows,
 * not inside an incident.
 */
export async function dailyUptime(
  sql: Sql,
  projectId: string,
  monitorIds: readonly string[],
  now: Date,
  days = 90,
): Promise<Map<string, DayUptime[]>> {
  const out = new Map<string, DayUptime[]>();
  if (monitorIds.length === 0) return out;
  const rows = await sql<{ monitor_id: string; day: string; watched: number; maintenance: number; down: number }[]>`
    select m.id as monitor_id, to_char(d.day, 'YYYY-MM-DD') as day,
      extract(epoch from (w.hi - w.lo))::float8 as watched,
      multirange_seconds(mr.ranges * tstzmultirange(tstzrange(w.lo, greatest(w.lo, w.hi)))) as maintenance,
      -- Time inside maintenance windows counts neither as down nor as time watched (ADR 0029).
      monitor_down_seconds(m.id, w.lo, greatest(w.lo, w.hi), mr.ranges) as down
    from monitors m
    cross join lateral (
      select maintenance_ranges(m.project_id, m.id, greatest(m.created_at, date_trunc('day', ${now}::timestamptz) - make_interval(days => ${days - 1})),
        ${now}::timestamptz) as ranges
    ) mr
    cross join generate_series(
      date_trunc('day', ${now}::timestamptz) - make_interval(days => ${days - 1}),
      date_trunc('day', ${now}::timestamptz), interval '1 day') as d(day)
    cross join lateral (select greatest(d.day, m.created_at) as lo, least(d.day + interval '1 day', ${now}::timestamptz) as hi) w
    where m.id = any(${sql.array([...monitorIds])}::uuid[]) and m.project_id = ${projectId}
    order by m.id, d.day`;
  for (const r of rows) {
    const list = out.get(r.monitor_id) ?? [];
    const span = r.watched - r.maintenance;
    // A day before the monitor existed has no figure; one spent entirely in maintenance is whole.
    const uptime = r.watched <= 0 ? null : span <= 0 ? 100 : Math.max(0, Math.min(100, 100 * (1 - r.down / span)));
    list.push({ day: r.day, uptime });
    out.set(r.monitor_id, list);
  }
  return out;
}

export interface OpenIncident {
  id: string;
  monitor_id: string;
  monitor_name: string;
  started_at: string;
  cause: string;
  regions: string[];
}

/** The ongoing incidents of the projects' monitors, newest first. */
export async function openIncidents(sql: Sql, projectIds: readonly string[]): Promise<OpenIncident[]> {
  if (projectIds.length === 0) return [];
  const rows = await sql<OpenIncident[]>`
    select i.id, i.monitor_id, m.name as monitor_name, i.started_at, i.cause, i.regions
    from incidents i join monitors m on m.id = i.monitor_id
    where i.ended_at is null and m.project_id = any(${sql.array([...projectIds])}::uuid[])
    order by i.started_at desc`;
  return rows.map((r) => ({ ...r, started_at: formatTimestamp(r.started_at) }));
}

/** Uptime of a monitor over the windows the dashboard shows, percent. */
export interface UptimeWindows {
  day: number;
  week: number;
  month: number;
}

/**
 * Uptime over the trailing 24 hours, 7 days and 30 days (each since creation when the monitor is
 * younger) of these monitors of the project, in one query: the same sum over incidents as a
 * monitor's `uptime` (monitors/repo.ts), each window looked up by the incidents index.
 */
export async function uptimeWindows(
  sql: Sql,
  projectId: string,
  monitorIds: readonly string[],
  now: Date,
): Promise<Map<string, UptimeWindows>> {
  const out = new Map<string, UptimeWindows>();
  if (monitorIds.length === 0) return out;
  const ts = now.toISOString();
  const rows = await sql<{ monitor_id: string; days: number; down: number; span: number }[]>`
    select m.id as monitor_id, d.days,
      (extract(epoch from (${ts}::timestamptz - w.since)) - multirange_seconds(mw.ranges))::float8 as span,
      -- Time inside maintenance windows counts neither as down nor as time watched (ADR 0029).
      monitor_down_seconds(m.id, w.since, ${ts}::timestamptz, mw.ranges) as down
    from monitors m
    cross join unnest(array[1, 7, 30]) as d(days)
    cross join lateral (select greatest(m.created_at, ${ts}::timestamptz - make_interval(days => d.days)) as since) w
    cross join lateral (select maintenance_ranges(m.project_id, m.id, w.since, ${ts}::timestamptz) as ranges) mw
    where m.id = any(${arrayLiteral(monitorIds)}::uuid[]) and m.project_id = ${projectId}`;
  for (const r of rows) {
    const windows = out.get(r.monitor_id) ?? { day: 100, week: 100, month: 100 };
    const key = r.days === 1 ? 'day' : r.days === 7 ? 'week' : 'month';
    windows[key] = uptimePercent(r.down, r.span);
    out.set(r.monitor_id, windows);
  }
  return out;
}

/** An incident as a public page may show it: when, how long, and a kind of cause, never its text. */
export interface PublicIncident {
  monitor_id: string;
  started_at: string;
  ended_at: string | null;
  /** Seconds, up to now while it is open. */
  duration: number;
  kind: CauseKind;
}

/** At most this many incidents of a monitor are read (a flapping one may have thousands). */
const PER_MONITOR = 1000;

/**
 * The incidents of these monitors of the project that overlap the last `days` UTC days, oldest
 * first, each with the kind of its cause (a cause's text may hold a host name or an error message:
 * it is left here).
 */
export async function recentIncidents(
  sql: Sql,
  projectId: string,
  monitorIds: readonly string[],
  now: Date,
  days: number,
): Promise<PublicIncident[]> {
  if (monitorIds.length === 0) return [];
  const ts = now.toISOString();
  const since = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (days - 1))).toISOString();
  const rows = await sql<{ monitor_id: string; started_at: string; ended_at: string | null; duration: number; cause: string }[]>`
    select i.monitor_id, i.started_at, i.ended_at, i.cause,
      floor(extract(epoch from (coalesce(i.ended_at, ${ts}::timestamptz) - i.started_at)))::int as duration
    from monitors m
    cross join lateral (
      (select * from incidents where monitor_id = m.id and started_at >= ${since} and started_at < ${ts}::timestamptz
       order by started_at desc limit ${PER_MONITOR})
      union all
      (select * from incidents where monitor_id = m.id and started_at < ${since} order by started_at desc limit 1)) i
    where m.id = any(${arrayLiteral(monitorIds)}::uuid[]) and m.project_id = ${projectId}
      and coalesce(i.ended_at, ${ts}::timestamptz) > ${since}
    order by i.started_at`;
  return rows.map((r) => ({
    monitor_id: r.monitor_id,
    started_at: formatTimestamp(r.started_at),
    ended_at: formatTimestamp(r.ended_at),
    duration: Math.max(0, r.duration),
    kind: causeKind(r.cause),
  }));
}

/**
 * Uptime of one monitor of the project over the trailing `seconds` (since creation when younger),
 * percent: the same sum over incidents, maintenance left out, as a monitor's `uptime`. Undefined
 * when the monitor is not of the project.
 */
export async function uptimeOver(sql: Sql, projectId: string, monitorId: string, seconds: number, now: Date): Promise<number | undefined> {
  const ts = now.toISOString();
  const [row] = await sql<{ down: number; span: number }[]>`
    select (extract(epoch from (${ts}::timestamptz - w.since)) - multirange_seconds(mw.ranges))::float8 as span,
      monitor_down_seconds(m.id, w.since, ${ts}::timestamptz, mw.ranges) as down
    from monitors m
    cross join lateral (select greatest(m.created_at, ${ts}::timestamptz - make_interval(secs => ${seconds})) as since) w
    cross join lateral (select maintenance_ranges(m.project_id, m.id, w.since, ${ts}::timestamptz) as ranges) mw
    where m.id = ${monitorId} and m.project_id = ${projectId}`;
  return row && uptimePercent(row.down, row.span);
}

/**
 * The mean or the 95th percentile of the response time of a monitor's successful checks over the
 * trailing `seconds`, in ms, from raw results (a percentile cannot be had from hourly sums); null
 * without a successful check. A failed check's time is its timeout, not a response time.
 */
export async function responseTime(sql: Sql, monitorId: string, seconds: number, stat: 'avg' | 'p95', now: Date): Promise<number | null> {
  const since = new Date(now.getTime() - seconds * 1000);
  const [row] = await sql<{ ms: number | null }[]>`
    select ${stat === 'avg' ? sql`avg(total_ms)` : sql`percentile_cont(0.95) within group (order by total_ms)`}::float8 as ms
    from check_results
    where monitor_id = ${monitorId} and scheduled_at > ${since} and scheduled_at <= ${now} and ok`;
  return row?.ms ?? null;
}
