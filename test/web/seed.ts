import type { Sql } from '../../control-plane/src/platform/db/sql.ts';

/**
 * Check results as the ingest role would have written them: one per region every `stepMinutes`
 * over the last `hours`, response times varying smoothly, a few failures. For charts in tests
 * that run the api role only (no agents).
 */
export async function seedResults(
  sql: Sql,
  monitorId: string,
  opts: { regions?: string[]; hours?: number; stepMinutes?: number; failEvery?: number; now?: Date } = {},
): Promise<void> {
  const regions = opts.regions ?? ['eu-west', 'us-east'];
  const now = opts.now ?? new Date();
  const step = (opts.stepMinutes ?? 10) * 60_000;
  const count = Math.floor(((opts.hours ?? 24) * 3_600_000) / step);
  const rows = [];
  for (const [r, region] of regions.entries()) {
    for (let i = count; i >= 1; i--) {
      const at = new Date(Math.floor((now.getTime() - i * step) / step) * step);
      const base = 80 + r * 70 + 25 * Math.sin(i / 7 + r) + 10 * Math.sin(i / 2.3);
      const failed = opts.failEvery ? i % opts.failEvery === 0 : false;
      const total = failed ? 10_000 : base;
      rows.push({
        monitor_id: monitorId,
        scheduled_at: at.toISOString(),
        region,
        checked_at: new Date(at.getTime() + 150).toISOString(),
        agent_id: `${region}-1`,
        ok: !failed,
        status_code: failed ? null : 200,
        dns_ms: 2 + r,
        connect_ms: 8 + r * 10,
        tls_ms: 20 + r * 15,
        ttfb_ms: total * 0.8,
        total_ms: total,
        error_class: failed ? 'timeout' : null,
        error_message: failed ? 'no response within 10 s' : null,
        attempts: failed ? 2 : 1,
      });
    }
  }
  for (let i = 0; i < rows.length; i += 500) await sql`insert into check_results ${sql(rows.slice(i, i + 500))} on conflict do nothing`;
}

/** What the ingest role records once a quorum of regions answered: the status and the last check. */
export async function markChecked(sql: Sql, monitorId: string, status: 1 | 2, at = new Date()): Promise<void> {
  await sql`update monitors set status = ${status}, last_checked_at = ${at.toISOString()} where id = ${monitorId}`;
}

export async function seedIncident(
  sql: Sql,
  monitorId: string,
  startedAt: Date,
  endedAt: Date | null,
  cause = 'timeout: no response within 10 s',
): Promise<void> {
  await sql`
    insert into incidents (monitor_id, started_at, ended_at, cause, regions)
    values (${monitorId}, ${startedAt.toISOString()}, ${endedAt?.toISOString() ?? null}, ${cause}, ${sql.array(['eu-west', 'us-east'])})`;
}

/** Makes a monitor look older than the test, so 90-day views have days to show. */
export async function backdate(sql: Sql, monitorId: string, days: number): Promise<void> {
  await sql`update monitors set created_at = now() - make_interval(days => ${days}) where id = ${monitorId}`;
}
