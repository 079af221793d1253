import { performance } from 'node:perf_hooks';
import type { Sql } from '../../control-plane/src/platform/db/sql.ts';
import type { CheckResult } from '../../shared/src/contracts/monitoring.ts';

export type Fill = { monitors: number; resultsPerMonitor: number; incidentsPerMonitor: number; seconds: number };

/**
 * `monitors` monitors in one project, created over the last 31 days, each with incidents and
 * results spread over the last 30 days, written with generate_series in the database itself.
 */
export async function fillHistory(sql: Sql, projectId: string, f: Omit<Fill, 'seconds'>): Promise<Fill> {
  const t0 = performance.now();
  // The trigger tells the assigner about each change; nothing listens in a bench database.
  await sql`alter table monitors disable trigger monitors_changed`;
  await sql`
    insert into monitors (project_id, name, url, valid_http_codes, interval_seconds, timeout_seconds, status, last_checked_at, created_at, updated_at)
    select ${projectId}, 'Monitor ' || g, 'https://site-' || g || '.example.test/health', '{200}', 60, 10, 1,
      now() - interval '20 seconds', now() - interval '31 days' + g * interval '1 millisecond', now()
    from generate_series(1, ${f.monitors}) g`;
  await sql`alter table monitors enable trigger monitors_changed`;
  await sql`
    insert into incidents (monitor_id, started_at, ended_at, cause, regions)
    select m.id, s.at, s.at + interval '4 minutes', 'Timed out after 10000 ms', '{bench}'
    from monitors m
    cross join lateral (select now() - ((k * 7 + (hashtext(m.id::text) & 7)) % 29 + 1) * interval '1 day' as at
                        from generate_series(1, ${f.incidentsPerMonitor}) k) s
    where m.project_id = ${projectId}`;
  await sql`
    insert into check_results (monitor_id, scheduled_at, region, checked_at, agent_id, ok, status_code,
      dns_ms, connect_ms, tls_ms, ttfb_ms, total_ms, error_class, error_message, attempts)
    select m.id, date_trunc('minute', now()) - d * (interval '30 days' / ${f.resultsPerMonitor}), 'bench',
      date_trunc('minute', now()) - d * (interval '30 days' / ${f.resultsPerMonitor}) + interval '5 ms', 'bench-agent',
      true, 200, 1.2, 0.8, 3.5, 41.0, 47.3, null, null, 1
    from monitors m cross join generate_series(1, ${f.resultsPerMonitor}) d
    where m.project_id = ${projectId}`;
  await sql`
    insert into monitor_regions (monitor_id, region, ok, scheduled_at, checked_at)
    select id, 'bench', true, date_trunc('minute', now()), date_trunc('minute', now()) + interval '5 ms' from monitors where project_id = ${projectId}`;
  await sql`analyze`;
  return { ...f, seconds: Math.round((performance.now() - t0) / 100) / 10 };
}

/** Results as an agent publishes them: slot by slot, every monitor once per slot. */
export function resultAt(monitorIds: readonly string[], base: number, i: number): CheckResult {
  const monitorId = monitorIds[i % monitorIds.length]!;
  const slot = base + Math.floor(i / monitorIds.length) * 60_000;
  return {
    monitor_id: monitorId,
    region: 'bench',
    agent_id: 'bench-agent',
    scheduled_at: new Date(slot).toISOString(),
    checked_at: new Date(slot + 3).toISOString(),
    ok: true,
    status_code: 200,
    timings: { dns: 0, connect: 0.61, tls: 0, ttfb: 20.4, total: 21.7 },
    error: null,
    attempts: 1,
  };
}

/** The naive ingest: one INSERT per result, each awaited. */
export async function insertOneByOne(sql: Sql, results: readonly CheckResult[]): Promise<number> {
  const t0 = performance.now();
  for (const r of results) {
    await sql`
      insert into check_results (monitor_id, scheduled_at, region, checked_at, agent_id, ok, status_code,
        dns_ms, connect_ms, tls_ms, ttfb_ms, total_ms, error_class, error_message, attempts)
      values (${r.monitor_id}, ${r.scheduled_at}, ${r.region}, ${r.checked_at}, ${r.agent_id}, ${r.ok}, ${r.status_code},
        ${r.timings.dns}, ${r.timings.connect}, ${r.timings.tls}, ${r.timings.ttfb}, ${r.timings.total},
        ${r.error?.class ?? null}, ${r.error?.message ?? null}, ${r.attempts})`;
  }
  return performance.now() - t0;
}
