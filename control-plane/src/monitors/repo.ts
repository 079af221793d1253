import type { Assertion, CertificateInfo, MonitorType } from '../../../shared/src/contracts/checks.ts';
import { arrayLiteral, type Db, type Sql } from '../platform/db/sql.ts';
import { offsetOf, type PageQuery } from '../platform/http/pagination.ts';
import { formatTimestamp, relativeTime } from '../platform/http/time.ts';
import { monitorStatuses, type Monitor } from './schemas.ts';
import { uptimePercent } from './uptime.ts';
import { withoutUrlCredentials, type BasicAuthColumns } from './url-credentials.ts';

export interface MonitorRecord {
  id: string;
  project_id: string;
  name: string;
  url: string;
  method: Monitor['method'];
  valid_http_codes: number[];
  basic_auth_username: string | null;
  basic_auth_password_sealed: string | null;
  active: boolean;
  interval_seconds: number;
  timeout_seconds: number;
  regions: string[] | null;
  quorum: number | null;
  confirm_down: number;
  confirm_up: number;
  flap_threshold: number | null;
  flap_window_seconds: number;
  alert_regional: boolean;
  alert_degraded: boolean;
  follow_redirects: boolean;
  tags: string[];
  type: MonitorType;
  /** The type's settings as JSON, sealed (they hold secrets); null for a plain http monitor. */
  settings_sealed: string | null;
  /** The same settings with every secret value taken out. */
  settings: Record<string, unknown>;
  assertions: Assertion[];
  /** Days before expiry at which to warn, most distant first. */
  certificate_expiry_days: number[];
  domain_expiry_days: number[];
  /** The registrable domain of the URL host ('' when none; null until worked out for a row older than it): its domain_expiry key. */
  registrable_domain: string | null;
  status: number;
  flapping_since: string | null;
  flap_last_change_at: string | null;
  regional_regions: string[] | null;
  degraded_regions: string[] | null;
  last_checked_at: string | null;
  created_at: string;
  updated_at: string;
}

interface ReadRow extends MonitorRecord {
  snoozed_until: string | null;
  certificate: CertificateInfo | null;
  domain_name: string | null;
  domain_expires_at: string | null;
  domain_registrar: string | null;
  domain_looked_up_at: string | null;
  domain_error: string | null;
  project_name: string;
  project_description: string;
  integration_ids: string[];
  depends_on: { type: 'monitor' | 'heartbeat'; id: string }[];
  incidents_count: number;
  last_incident_duration: number;
  down_seconds: number;
  degraded_seconds: number;
  window_seconds: number;
  total?: number;
}

/**
 * Monitors with what the pipeline derived for them: incidents, the 30-day uptime (time not in an
 * incident over the trailing 30 days, or since creation when younger) and the last check.
 * `monitors` yields the rows to show (a page at most); everything derived is looked up for those
 * rows only, each by an index (the latest certificate and the domain's registration are joined
 * by their keys), so the cost does not grow with the number of monitors.
 */
function readQuery(sql: Sql, now: Date, monitors: ReturnType<Sql>, extra = sql``, order = sql`m.created_at, m.id`) {
  const ts = now.toISOString();
  return sql<ReadRow[]>`
    select m.*, p.name as project_name, p.description as project_description,
      coalesce((select array_agg(mi.integration_id order by mi.integration_id) from monitor_integrations mi where mi.monitor_id = m.id), '{}') as integration_ids,
      coalesce((select json_agg(json_build_object('type', case when d.parent_monitor_id is not null then 'monitor' else 'heartbeat' end,
                  'id', d.parent_id) order by d.position) from dependencies d where d.child_id = m.id), '[]') as depends_on,
      (select count(*)::int from incidents i where i.monitor_id = m.id) as incidents_count,
      coalesce((select floor(extract(epoch from (coalesce(i.ended_at, ${ts}::timestamptz) - i.started_at)))::int
                from incidents i where i.monitor_id = m.id order by i.started_at desc limit 1), 0) as last_incident_duration,
      -- Time inside maintenance windows counts neither as down nor as time watched (ADR 0029).
      monitor_down_seconds(m.id, w.since, ${ts}::timestamptz, mw.ranges) as down_seconds,
      monitor_degraded_seconds(m.id, w.since, ${ts}::timestamptz, mw.ranges) as degraded_seconds,
      (extract(epoch from (${ts}::timestamptz - w.since)) - multirange_seconds(mw.ranges))::float8 as window_seconds,
      greatest(m.last_checked_at, (select max(r.checked_at) from monitor_regions r where r.monitor_id = m.id)) as last_checked_at,
      c.certificate, nullif(m.registrable_domain, '') as domain_name, d.expires_at as domain_expires_at,
      d.registrar as domain_registrar, d.looked_up_at as domain_looked_up_at, d.error as domain_error
      ${extra}
    from (${monitors}) m
    join projects p on p.id = m.project_id
    left join monitor_certificates c on c.monitor_id = m.id
    left join domain_expiry d on d.domain = m.registrable_domain
    cross join lateral (select greatest(m.created_at, ${ts}::timestamptz - interval '30 days') as since) w
    cross join lateral (select maintenance_ranges(m.project_id, m.id, w.since, ${ts}::timestamptz) as ranges) mw
    order by ${order}`;
}

/** Days until `at` from now, with a fraction (3 decimals), as a check reports them. */
function daysLeft(at: string, now: Date): number {
  return Math.round(((Date.parse(at) - now.getTime()) / 86_400_000) * 1000) / 1000;
}

/** The status a monitor shows: paused while not active, degraded while up with a degraded period open. */
function shownStatus(r: Pick<MonitorRecord, 'active' | 'status' | 'degraded_regions'>): number {
  if (!r.active) return monitorStatuses.paused;
  return r.status === monitorStatuses.up && r.degraded_regions !== null ? monitorStatuses.degraded : r.status;
}

function toMonitor(r: ReadRow, now: Date): Monitor {
  return {
    id: r.id,
    name: r.name,
    // Stored without credentials since they are split off on write; a row older than that
    // still never shows them.
    url: withoutUrlCredentials(r.url),
    project_id: r.project_id,
    valid_http_codes: r.valid_http_codes,
    status: shownStatus(r),
    basic_auth_username: r.basic_auth_username,
    method: r.method,
    active: r.active,
    interval: r.interval_seconds,
    timeout: r.timeout_seconds,
    regions: r.regions,
    quorum: r.quorum,
    confirm_down: r.confirm_down,
    confirm_up: r.confirm_up,
    flap_threshold: r.flap_threshold,
    flap_window_seconds: r.flap_window_seconds,
    flapping_since: r.flapping_since ? formatTimestamp(r.flapping_since) : null,
    depends_on: r.depends_on,
    alert_regional: r.alert_regional,
    alert_degraded: r.alert_degraded,
    failing_regions: r.regional_regions ?? [],
    degraded_regions: r.degraded_regions ?? [],
    snoozed_until:
      r.snoozed_until !== null && Date.parse(formatTimestamp(r.snoozed_until)) > now.getTime() ? formatTimestamp(r.snoozed_until) : null,
    integration_ids: r.integration_ids,
    follow_redirects: r.follow_redirects,
    tags: r.tags,
    type: r.type,
    settings: r.settings,
    assertions: r.assertions,
    certificate_expiry_days: r.certificate_expiry_days,
    domain_expiry_days: r.domain_expiry_days,
    certificate: r.certificate && { ...r.certificate, days_left: daysLeft(r.certificate.valid_to, now) },
    domain: r.domain_name
      ? {
          name: r.domain_name,
          expires_at: formatTimestamp(r.domain_expires_at),
          registrar: r.domain_registrar,
          checked_at: formatTimestamp(r.domain_looked_up_at),
          error: r.domain_error,
        }
      : null,
    created_at: formatTimestamp(r.created_at),
    updated_at: formatTimestamp(r.updated_at),
    uptime: uptimePercent(r.down_seconds, r.window_seconds),
    degraded_percent: Math.round((100 - uptimePercent(r.degraded_seconds, r.window_seconds)) * 1000) / 1000,
    last_checked: relativeTime(r.last_checked_at ? new Date(formatTimestamp(r.last_checked_at)) : null, now),
    incidents_count: r.incidents_count,
    last_incident_duration: r.last_incident_duration,
    project: { id: r.project_id, name: r.project_name, description: r.project_description },
  };
}

/**
 * A page of the projects' monitors, oldest first, those with `tag` only when it is given. Each
 * project contributes its first offset + per_page monitors by index order, so a page costs what
 * its offset costs, and the total comes from the counts the monitors triggers keep (a count of
 * the tagged ones with a tag).
 */
export async function listMonitors(sql: Sql, projectIds: readonly string[], page: PageQuery, now: Date, filter: { tag?: string } = {}) {
  const projects = [...new Set(projectIds)];
  const offset = offsetOf(page);
  const tagged = filter.tag ? sql`and tags @> ${arrayLiteral([filter.tag])}::text[]` : sql``;
  const total = filter.tag
    ? sql`select count(*)::int from monitors where project_id = any(${projects}::uuid[]) ${tagged}`
    : sql`select coalesce(sum(monitors), 0)::int from monitor_counts where project_id = any(${projects}::uuid[])`;
  const rows = await readQuery(
    sql,
    now,
    sql`
      select pm.* from unnest(${projects}::uuid[]) as pr(id)
      cross join lateral (select * from monitors where project_id = pr.id ${tagged} order by created_at, id limit ${offset + page.per_page}) pm
      order by pm.created_at, pm.id
      limit ${page.per_page} offset ${offset}`,
    sql`, (${total}) as total`,
  );
  // A page past the end has no row to carry the total.
  const count = rows[0]?.total ?? (await sql<{ n: number }[]>`select (${total}) as n`)[0]!.n;
  return { items: rows.map((r) => toMonitor(r, now)), total: count };
}

/** What the dashboard's list of a project's monitors is narrowed to and ordered by. */
export interface MonitorSearch {
  /** A status name: what the monitor shows (paused when not active). */
  status?: 'pending' | 'up' | 'down' | 'paused' | 'degraded';
  /** Part of the name, in any case. */
  name?: string;
  tag?: string;
  /** `status`: down first, then pending, up and paused; `name`: A to Z; `created`: oldest first. */
  sort: 'status' | 'name' | 'created';
}

const statusFilters = {
  pending: (sql: Sql) => sql`and active and status = ${monitorStatuses.pending}`,
  up: (sql: Sql) => sql`and active and status = ${monitorStatuses.up} and degraded_regions is null`,
  degraded: (sql: Sql) => sql`and active and status = ${monitorStatuses.up} and degraded_regions is not null`,
  down: (sql: Sql) => sql`and active and status = ${monitorStatuses.down}`,
  paused: (sql: Sql) => sql`and not active`,
};

/** A page of one project's monitors that match, in the order asked for, and how many match. */
export async function searchMonitors(sql: Sql, projectId: string, search: MonitorSearch, page: PageQuery, now: Date) {
  const where = sql`where project_id = ${projectId}
    ${search.tag ? sql`and tags @> ${arrayLiteral([search.tag])}::text[]` : sql``}
    ${search.name ? sql`and strpos(lower(name), lower(${search.name})) > 0` : sql``}
    ${search.status ? statusFilters[search.status](sql) : sql``}`;
  // Down first, then degraded: what needs a look leads the list.
  const rank = (m: string) =>
    sql`array_position(array[${monitorStatuses.down}, ${monitorStatuses.degraded}, ${monitorStatuses.pending}, ${monitorStatuses.up},
        ${monitorStatuses.paused}]::int[],
      case when not ${sql(m)}.active then ${monitorStatuses.paused}
        when ${sql(m)}.status = ${monitorStatuses.up} and ${sql(m)}.degraded_regions is not null then ${monitorStatuses.degraded}
        else ${sql(m)}.status::int end)`;
  const orders = {
    status: (m: string) => sql`${rank(m)}, lower(${sql(m)}.name), ${sql(m)}.created_at, ${sql(m)}.id`,
    name: (m: string) => sql`lower(${sql(m)}.name), ${sql(m)}.created_at, ${sql(m)}.id`,
    created: (m: string) => sql`${sql(m)}.created_at, ${sql(m)}.id`,
  };
  const order = orders[search.sort];
  const rows = await readQuery(
    sql,
    now,
    sql`
      select f.*, count(*) over ()::int as total from monitors f ${where}
      order by ${order('f')}
      limit ${page.per_page} offset ${offsetOf(page)}`,
    sql``,
    order('m'),
  );
  const total = rows[0]?.total ?? (await sql<{ n: number }[]>`select count(*)::int as n from monitors ${where}`)[0]!.n;
  return { items: rows.map((r) => toMonitor(r, now)), total };
}

/** Ids, names and shown statuses of a project's monitors (these ids, or all), oldest first. */
export async function monitorStates(sql: Sql, projectId: string, ids?: readonly string[]) {
  const rows = await sql<(Pick<MonitorRecord, 'id' | 'name' | 'active' | 'status' | 'degraded_regions'> & { created_at: string })[]>`
    select id, name, active, status, degraded_regions, created_at from monitors
    where project_id = ${projectId} ${ids ? sql`and id = any(${arrayLiteral(ids)}::uuid[])` : sql``}
    order by created_at, id`;
  return rows.map((r) => ({ id: r.id, name: r.name, status: shownStatus(r) }));
}

/** The tags the project's monitors carry, A to Z. */
export async function projectTags(sql: Sql, projectId: string): Promise<string[]> {
  const rows = await sql<{ tag: string }[]>`
    select distinct unnest(tags) as tag from monitors where project_id = ${projectId} order by 1`;
  return rows.map((r) => r.tag);
}

export async function findMonitor(sql: Sql, id: string, projectIds: readonly string[], now: Date): Promise<Monitor | undefined> {
  const [row] = await readQuery(sql, now, sql`select * from monitors where id = ${id} and project_id = any(${[...projectIds]}::uuid[])`);
  return row && toMonitor(row, now);
}

export async function findRecord(sql: Sql, id: string, projectIds: readonly string[]): Promise<MonitorRecord | undefined> {
  const [row] = await sql<MonitorRecord[]>`
    select * from monitors where id = ${id} and project_id = any(${sql.array([...projectIds])}::uuid[])`;
  return row;
}

export type MonitorWrite = Omit<
  MonitorRecord,
  | 'id'
  | 'status'
  | 'last_checked_at'
  | 'created_at'
  | 'updated_at'
  | 'flapping_since'
  | 'flap_last_change_at'
  | 'regional_regions'
  | 'degraded_regions'
  | 'registrable_domain'
> & { registrable_domain: string };

export async function insertMonitor(db: Db, m: MonitorWrite): Promise<string> {
  const [row] = await db<{ id: string }[]>`
    insert into monitors (project_id, name, url, method, valid_http_codes, basic_auth_username, basic_auth_password_sealed,
      active, interval_seconds, timeout_seconds, regions, quorum, confirm_down, confirm_up, flap_threshold, flap_window_seconds,
      alert_regional, alert_degraded, follow_redirects, tags, type, settings_sealed, settings, assertions, certificate_expiry_days,
      domain_expiry_days, registrable_domain)
    values (${m.project_id}, ${m.name}, ${m.url}, ${m.method}, ${db.array(m.valid_http_codes)}::int[], ${m.basic_auth_username},
      ${m.basic_auth_password_sealed}, ${m.active}, ${m.interval_seconds}, ${m.timeout_seconds},
      ${m.regions ? db.array(m.regions) : null}::text[], ${m.quorum}, ${m.confirm_down}, ${m.confirm_up}, ${m.flap_threshold},
      ${m.flap_window_seconds}, ${m.alert_regional}, ${m.alert_degraded}, ${m.follow_redirects}, ${arrayLiteral(m.tags)}::text[], ${m.type},
      ${m.settings_sealed}, ${db.json(m.settings as never)}, ${db.json(m.assertions as never)},
      ${arrayLiteral(m.certificate_expiry_days.map(String))}::int[], ${arrayLiteral(m.domain_expiry_days.map(String))}::int[],
      ${m.registrable_domain})
    returning id`;
  return row!.id;
}

export async function updateMonitor(db: Db, id: string, m: MonitorWrite): Promise<void> {
  await db`
    update monitors set name = ${m.name}, url = ${m.url}, method = ${m.method},
      valid_http_codes = ${db.array(m.valid_http_codes)}::int[], basic_auth_username = ${m.basic_auth_username},
      basic_auth_password_sealed = ${m.basic_auth_password_sealed}, active = ${m.active},
      interval_seconds = ${m.interval_seconds}, timeout_seconds = ${m.timeout_seconds},
      regions = ${m.regions ? db.array(m.regions) : null}::text[], quorum = ${m.quorum}, confirm_down = ${m.confirm_down},
      confirm_up = ${m.confirm_up}, flap_threshold = ${m.flap_threshold}, flap_window_seconds = ${m.flap_window_seconds},
      alert_regional = ${m.alert_regional}, alert_degraded = ${m.alert_degraded},
      follow_redirects = ${m.follow_redirects},
      tags = ${arrayLiteral(m.tags)}::text[], type = ${m.type}, settings_sealed = ${m.settings_sealed},
      settings = ${db.json(m.settings as never)}, assertions = ${db.json(m.assertions as never)},
      certificate_expiry_days = ${arrayLiteral(m.certificate_expiry_days.map(String))}::int[],
      domain_expiry_days = ${arrayLiteral(m.domain_expiry_days.map(String))}::int[],
      registrable_domain = ${m.registrable_domain}, updated_at = now()
    where id = ${id}`;
}

export async function deleteMonitor(sql: Sql, id: string, projectIds: readonly string[]): Promise<boolean> {
  const rows = await sql`delete from monitors where id = ${id} and project_id = any(${sql.array([...projectIds])}::uuid[]) returning id`;
  return rows.length > 0;
}

/** Monitors whose stored URL may still hold credentials (written before they were split off on write). */
export async function monitorsWithUrlCredentials(sql: Sql): Promise<(BasicAuthColumns & { id: string })[]> {
  return sql<(BasicAuthColumns & { id: string })[]>`
    select id, url, basic_auth_username, basic_auth_password_sealed from monitors where url like '%@%'`;
}

/** Writes the credentials split off a URL, if the URL is still the one read; whether it was. */
export async function replaceUrlCredentials(sql: Sql, id: string, readUrl: string, m: BasicAuthColumns): Promise<boolean> {
  const updated = await sql`
    update monitors set url = ${m.url}, basic_auth_username = ${m.basic_auth_username},
      basic_auth_password_sealed = ${m.basic_auth_password_sealed}, updated_at = now()
    where id = ${id} and url = ${readUrl}`;
  return updated.count > 0;
}

/** Deletes up to `limit` check results scheduled before `cutoff` (retention); how many. */
export async function pruneResults(sql: Sql, cutoff: string, limit: number): Promise<number> {
  const { count } = await sql`
    delete from check_results where ctid = any(array(
      select ctid from check_results where scheduled_at < ${cutoff} limit ${limit}))`;
  return count;
}

/** What the assigner reads of a monitor. */
export type AssignableMonitor = Pick<
  MonitorRecord,
  | 'id'
  | 'project_id'
  | 'url'
  | 'method'
  | 'valid_http_codes'
  | 'basic_auth_username'
  | 'basic_auth_password_sealed'
  | 'active'
  | 'interval_seconds'
  | 'timeout_seconds'
  | 'regions'
  | 'follow_redirects'
  | 'type'
  | 'settings_sealed'
  | 'assertions'
  | 'updated_at'
>;

/** Every monitor as the assigner needs it, or the one with this id. */
export function loadAssignable(db: Db, id?: string) {
  return db<AssignableMonitor[]>`
    select id, project_id, url, method, valid_http_codes, basic_auth_username, basic_auth_password_sealed, active,
      interval_seconds, timeout_seconds, regions, follow_redirects, type, settings_sealed, assertions, updated_at
    from monitors ${id ? db`where id = ${id}` : db``}`;
}

/** Forgets the certificate a monitor's checks last saw (its address changed: the next check presents its own). */
export async function forgetCertificate(tx: Db, monitorId: string): Promise<void> {
  await tx`delete from monitor_certificates where monitor_id = ${monitorId}`;
}
