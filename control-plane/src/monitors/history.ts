import type { z } from 'zod';
import type { Sql } from '../platform/db/sql.ts';
import { offsetOf, type PageQuery } from '../platform/http/pagination.ts';
import { formatTimestamp } from '../platform/http/time.ts';
import type { CheckResultView, IncidentView } from './schemas.ts';

/** Recent checks of a monitor, newest first (the monitor's tenancy is checked by the caller). */
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
  }));
  return { items, total };
}

export async function listIncidents(sql: Sql, monitorId: string, page: PageQuery, now: Date) {
  const ts = now.toISOString();
  const rows = await sql<
    { id: string; started_at: string; ended_at: string | null; duration: number; cause: string; regions: string[]; total: number }[]
  >`
    select id, started_at, ended_at, cause, regions,
      floor(extract(epoch from (coalesce(ended_at, ${ts}::timestamptz) - started_at)))::int as duration,
      count(*) over ()::int as total
    from incidents where monitor_id = ${monitorId}
    order by started_at desc
    limit ${page.per_page} offset ${offsetOf(page)}`;
  const total =
    rows[0]?.total ?? (await sql<{ n: number }[]>`select count(*)::int as n from incidents where monitor_id = ${monitorId}`)[0]!.n;
  const items: z.infer<typeof IncidentView>[] = rows.map((r) => ({
    id: r.id,
    started_at: formatTimestamp(r.started_at),
    ended_at: formatTimestamp(r.ended_at),
    duration: Math.max(0, r.duration),
    cause: r.cause,
    regions: r.regions,
  }));
  return { items, total };
}
