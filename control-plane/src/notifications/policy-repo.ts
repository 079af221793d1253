import { arrayLiteral, type Db } from '../platform/db/sql.ts';
import { formatTimestamp } from '../platform/http/time.ts';

/** What the router needs to know, for one batch, of the policies beyond maintenance (ADR 0030). */
export interface AlertPolicies {
  /** Subjects that depend on something. */
  children: Set<string>;
  /** Projects that group their monitors' alerts: the window in seconds. */
  groupSeconds: Map<string, number>;
  /** Monitors that detect flapping, or flap now. */
  flap: Map<string, { threshold: number | null; windowSeconds: number; flapping: boolean }>;
  /** Snoozed monitors and heartbeats: until when (ms). */
  snoozed: Map<string, number>;
}

/** The policies of these events' subjects and projects, in one round trip. */
export async function alertPolicies(
  db: Db,
  events: readonly { project_id: string; subject: { type: string; id: string } }[],
): Promise<AlertPolicies> {
  const subjects = arrayLiteral([...new Set(events.map((e) => e.subject.id))]);
  const projects = arrayLiteral([...new Set(events.map((e) => e.project_id))]);
  const rows = await db<
    {
      k: 'child' | 'group' | 'flap' | 'snooze';
      id: string;
      a: number | null;
      b: number | null;
      flapping: boolean | null;
      until: string | null;
    }[]
  >`
    select distinct 'child' as k, child_id as id, null::int as a, null::int as b, null::boolean as flapping, null::timestamptz as until
      from dependencies where child_id = any(${subjects}::uuid[])
    union all
    select 'group', id, alert_group_seconds, null, null, null from projects
      where id = any(${projects}::uuid[]) and alert_group_seconds is not null
    union all
    select 'flap', id, flap_threshold, flap_window_seconds, flapping_since is not null, null from monitors
      where id = any(${subjects}::uuid[]) and (flap_threshold is not null or flapping_since is not null)
    union all
    select 'snooze', id, null, null, null, snoozed_until from monitors where id = any(${subjects}::uuid[]) and snoozed_until is not null
    union all
    select 'snooze', id, null, null, null, snoozed_until from heartbeats where id = any(${subjects}::uuid[]) and snoozed_until is not null`;
  const out: AlertPolicies = { children: new Set(), groupSeconds: new Map(), flap: new Map(), snoozed: new Map() };
  for (const r of rows) {
    if (r.k === 'child') out.children.add(r.id);
    else if (r.k === 'group') out.groupSeconds.set(r.id, r.a!);
    else if (r.k === 'snooze') out.snoozed.set(r.id, Date.parse(formatTimestamp(r.until!)));
    else out.flap.set(r.id, { threshold: r.a, windowSeconds: r.b!, flapping: r.flapping === true });
  }
  return out;
}

/** The monitor's state changes (incident starts and ends) within (from, to]. */
export async function stateChanges(db: Db, monitorId: string, from: Date, to: Date): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select (select count(*) from incidents where monitor_id = ${monitorId} and started_at > ${from} and started_at <= ${to})
      + (select count(*) from incidents where monitor_id = ${monitorId} and ended_at > ${from} and ended_at <= ${to}) as n`;
  return Number(row!.n);
}

/** Marks the monitor flapping from `at`; false when another router already did. */
export async function startFlapping(tx: Db, monitorId: string, at: string): Promise<boolean> {
  const rows = await tx`
    update monitors set flapping_since = ${at}, flap_last_change_at = ${at}
    where id = ${monitorId} and flapping_since is null returning 1`;
  return rows.length > 0;
}

/** A change of a flapping monitor, not sent: it settles a window after the last one. */
export async function noteFlapChange(tx: Db, monitorId: string, at: string): Promise<void> {
  await tx`
    update monitors set flap_last_change_at = greatest(coalesce(flap_last_change_at, ${at}::timestamptz), ${at}::timestamptz)
    where id = ${monitorId} and flapping_since is not null`;
}

export interface Settling {
  id: string;
  project_id: string;
  name: string;
  url: string;
  status: number;
  flapping_since: string;
  flap_last_change_at: string;
  flap_window_seconds: number;
  incident_id: string | null;
}

/** Flapping monitors with no change for a whole window up to `now`, for this transaction. */
export async function claimSettled(tx: Db, now: Date, limit: number): Promise<Settling[]> {
  return tx<Settling[]>`
    select m.id, m.project_id, m.name, m.url, m.status, m.flapping_since, m.flap_last_change_at, m.flap_window_seconds,
      (select id from incidents i where i.monitor_id = m.id and i.ended_at is null) as incident_id
    from monitors m
    where m.flapping_since is not null and m.flap_last_change_at + m.flap_window_seconds * interval '1 second' <= ${now}
    order by m.flap_last_change_at
    limit ${limit}
    for update of m skip locked`;
}

/** Ends the flapping begun at `since`; false when it was already ended. */
export async function endFlapping(tx: Db, monitorId: string, since: string): Promise<boolean> {
  const rows = await tx`
    update monitors set flapping_since = null, flap_last_change_at = null
    where id = ${monitorId} and flapping_since = ${since} returning 1`;
  return rows.length > 0;
}
