import { nextBoundary, type WindowSchedule } from '../../control-plane/src/maintenance/schedule.ts';
import type { Sql } from '../../control-plane/src/platform/db/sql.ts';

/** Zones of the windows: whole-hour, half-hour and 45-minute offsets, both hemispheres' daylight saving, none. */
export const zones = [
  'UTC',
  'Europe/Berlin',
  'Europe/London',
  'America/New_York',
  'America/Los_Angeles',
  'America/Sao_Paulo',
  'Asia/Tokyo',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Australia/Sydney',
  'Pacific/Auckland',
] as const;

export type Scale = { projects: number; monitorsPerProject: number; heartbeatsPerProject: number };
export type ProjectSubjects = { projectId: string; monitorIds: string[]; heartbeatIds: string[] };

/**
 * Projects of one organization, each with its monitors and heartbeats, written with
 * generate_series in the database itself.
 */
export async function fillProjects(sql: Sql, s: Scale): Promise<ProjectSubjects[]> {
  const [org] = await sql<{ id: string }[]>`insert into organizations (name) values ('Bench') returning id`;
  await sql`insert into projects (organization_id, name) select ${org!.id}, 'Project ' || g from generate_series(1, ${s.projects}) g`;
  // These triggers tell the assigner and the deadline role of each row; nothing listens in a bench database.
  await sql`alter table monitors disable trigger monitors_changed`;
  await sql`
    insert into monitors (project_id, name, url, valid_http_codes, interval_seconds, timeout_seconds, status, last_checked_at)
    select p.id, 'Monitor ' || g, 'https://site-' || g || '.p' || left(p.id::text, 8) || '.example.test/health', '{200}', 60, 10, 1,
      now() - interval '20 seconds'
    from projects p cross join generate_series(1, ${s.monitorsPerProject}) g`;
  await sql`alter table monitors enable trigger monitors_changed`;
  await sql`alter table heartbeats disable trigger heartbeats_added_or_removed`;
  await sql`
    insert into heartbeats (project_id, name, grace_period, period, status, next_ping_at, last_ping_at, last_ping_kind)
    select p.id, 'Job ' || g, 300, 3600, 'up', now() + interval '1 hour', now(), 'success'
    from projects p cross join generate_series(1, ${s.heartbeatsPerProject}) g`;
  await sql`alter table heartbeats enable trigger heartbeats_added_or_removed`;
  const rows = await sql<{ project_id: string; monitor_ids: string[]; heartbeat_ids: string[] }[]>`
    select p.id as project_id,
      array(select id::text from monitors where project_id = p.id) as monitor_ids,
      array(select id::text from heartbeats where project_id = p.id) as heartbeat_ids
    from projects p order by p.created_at, p.id`;
  return rows.map((r) => ({ projectId: r.project_id, monitorIds: r.monitor_ids, heartbeatIds: r.heartbeat_ids }));
}

/** A window as the API would store it; instants in milliseconds since the epoch. */
export type WindowDef = {
  project_id: string;
  name: string;
  starts_at: number | null;
  ends_at: number | null;
  cron: string | null;
  duration_seconds: number | null;
  timezone: string;
  whole_project: boolean;
  monitor_ids: string[];
  heartbeat_ids: string[];
  active: boolean;
  created_at: number;
};

/** A small seeded generator (mulberry32): the same mix on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

function scope(rand: () => number, s: ProjectSubjects): Pick<WindowDef, 'whole_project' | 'monitor_ids' | 'heartbeat_ids'> {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const some = (ids: readonly string[], k: number) => {
    const out = new Set<string>();
    while (out.size < Math.min(k, ids.length)) out.add(ids[Math.floor(rand() * ids.length)]!);
    return [...out];
  };
  const r = rand();
  if (r < 0.15) return { whole_project: true, monitor_ids: [], heartbeat_ids: [] };
  if (r < 0.7) return { whole_project: false, monitor_ids: some(s.monitorIds, pick([1, 1, 2, 3, 5, 8, 20, 50])), heartbeat_ids: [] };
  if (r < 0.85) return { whole_project: false, monitor_ids: [], heartbeat_ids: some(s.heartbeatIds, pick([1, 2, 3, 5])) };
  return {
    whole_project: false,
    monitor_ids: some(s.monitorIds, pick([1, 2, 5, 10])),
    heartbeat_ids: some(s.heartbeatIds, pick([1, 2])),
  };
}

export const mixShares = {
  scope: '15% whole project, 55% monitors (1 to 50), 15% heartbeats (1 to 5), 15% both',
  kinds:
    '35% one-off (starting between 20 days ago and 30 days ahead, 15 min to 8 h), 65% recurring: daily 40%, weekly 30%, weekdays 10%, monthly 10%, every 6 hours 10%, mostly at night and on the hour or half hour, 15 min to 4 h',
  paused: '5% paused',
};

/**
 * `n` windows spread evenly over the projects, in the proportions of `mixShares`, created up to
 * half a year before `now` (one-off windows before their start).
 */
export function windowMix(subjects: readonly ProjectSubjects[], n: number, now: number, seed = 29): WindowDef[] {
  const rand = seeded(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const out: WindowDef[] = [];
  for (let i = 0; i < n; i++) {
    const s = subjects[i % subjects.length]!;
    const base = { project_id: s.projectId, name: `Window ${i + 1}`, timezone: pick(zones), ...scope(rand, s), active: rand() >= 0.05 };
    if (rand() < 0.35) {
      const start = Math.round((now + (rand() * 50 - 20) * DAY) / (15 * MINUTE)) * 15 * MINUTE;
      const end = start + pick([15, 30, 60, 120, 240, 480]) * MINUTE;
      const created = Math.min(now, start) - HOUR - Math.floor(rand() * 14 * DAY);
      out.push({ ...base, starts_at: start, ends_at: end, cron: null, duration_seconds: null, created_at: created });
      continue;
    }
    const minute = rand() < 0.8 ? pick([0, 0, 0, 0, 30, 30, 15, 45]) : Math.floor(rand() * 60);
    const hour = rand() < 0.7 ? Math.floor(rand() * 6) : Math.floor(rand() * 24);
    const form = rand();
    const cron =
      form < 0.4
        ? `${minute} ${hour} * * *`
        : form < 0.7
          ? `${minute} ${hour} * * ${Math.floor(rand() * 7)}`
          : form < 0.8
            ? `${minute} ${hour} * * 1-5`
            : form < 0.9
              ? `${minute} ${hour} ${1 + Math.floor(rand() * 28)} * *`
              : `${minute} */6 * * *`;
    out.push({
      ...base,
      starts_at: null,
      ends_at: null,
      cron,
      duration_seconds: pick([900, 1800, 3600, 7200, 14400]),
      created_at: now - DAY - Math.floor(rand() * 180 * DAY),
    });
  }
  return out;
}

/** The local hour and minute of an instant in a zone. */
function localTime(tz: string, at: number): { hour: number; minute: number } {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', hour: 'numeric', minute: 'numeric' }).formatToParts(at);
  const p = Object.fromEntries(parts.map((x) => [x.type, Number(x.value)]));
  return { hour: p.hour!, minute: p.minute! };
}

/**
 * `n` windows, created at `now`, that all start at `at`: one-off ones, and with `recurring`
 * (`at` on a whole minute) every other one a daily cron expression at `at`'s local time in one
 * of the zones. Each lasts an hour.
 */
export function burstWindows(subjects: readonly ProjectSubjects[], n: number, now: number, at: number, recurring: boolean): WindowDef[] {
  const rand = seeded(1_000);
  return Array.from({ length: n }, (_, i) => {
    const s = subjects[i % subjects.length]!;
    const timezone = zones[i % zones.length]!;
    const base = { project_id: s.projectId, name: `Burst ${i + 1}`, timezone, ...scope(rand, s), active: true, created_at: now };
    if (!recurring || i % 2 === 0) return { ...base, starts_at: at, ends_at: at + HOUR, cron: null, duration_seconds: null };
    const { hour, minute } = localTime(timezone, at);
    return { ...base, starts_at: null, ends_at: null, cron: `${minute} ${hour} * * *`, duration_seconds: 3600 };
  });
}

export function scheduleOfDef(d: WindowDef): WindowSchedule {
  return {
    starts_at: d.starts_at,
    ends_at: d.ends_at,
    cron: d.cron,
    duration_seconds: d.duration_seconds,
    timezone: d.timezone,
    active: d.active,
    not_before: d.created_at,
  };
}

/** Every boundary of these windows in (from, to], by the rules the worker steps them with; ascending. */
export function boundariesBetween(defs: readonly WindowDef[], from: number, to: number): number[] {
  const out: number[] = [];
  for (const d of defs) {
    const w = scheduleOfDef(d);
    let t = from;
    for (let i = 0; i < 1_000; i++) {
      const b = nextBoundary(w, t);
      if (b === null || b > to) break;
      out.push(b);
      t = b;
    }
  }
  return out.sort((a, b) => a - b);
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * Inserts windows the way the API's insert does (the boundary worker looks at each at `now`, the
 * write's instant, and the statement wakes it), many rows a statement. Returns their ids.
 */
export async function insertWindows(sql: Sql, defs: readonly WindowDef[], now: number): Promise<string[]> {
  const ids: string[] = [];
  await sql.begin(async (tx) => {
    for (let i = 0; i < defs.length; i += 1_000) {
      const json = JSON.stringify(
        defs
          .slice(i, i + 1_000)
          .map((d) => ({ ...d, starts_at: iso(d.starts_at), ends_at: iso(d.ends_at), created_at: iso(d.created_at) })),
      );
      const rows = await tx<{ id: string }[]>`
        insert into maintenance_windows (project_id, name, starts_at, ends_at, cron, duration_seconds, timezone, whole_project,
          monitor_ids, heartbeat_ids, active, next_boundary_at, created_at, updated_at)
        select (e->>'project_id')::uuid, e->>'name', (e->>'starts_at')::timestamptz, (e->>'ends_at')::timestamptz, e->>'cron',
          (e->>'duration_seconds')::int, e->>'timezone', (e->>'whole_project')::boolean,
          array(select jsonb_array_elements_text(e->'monitor_ids'))::uuid[], array(select jsonb_array_elements_text(e->'heartbeat_ids'))::uuid[],
          (e->>'active')::boolean, ${new Date(now)}, (e->>'created_at')::timestamptz, ${new Date(now)}
        from jsonb_array_elements(${json}::text::jsonb) as e
        returning id`;
      for (const r of rows) ids.push(r.id);
    }
  });
  return ids;
}
