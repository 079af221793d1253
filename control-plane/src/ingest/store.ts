import type { CheckResult } from '../../../shared/src/contracts/monitoring.ts';
import type { DomainEvent } from '../../../shared/src/contracts/events.ts';
import type { Db, Sql } from '../db/sql.ts';
import { recordEvent } from '../events/outbox.ts';
import { evaluateMonitor, staleAfter, type MonitorHealth } from '../monitors/status.ts';

interface Inserted {
  monitor_id: string;
  scheduled_at: string;
  region: string;
  checked_at: string;
  ok: boolean;
  total_ms: number;
  error: string | null;
}

/**
 * Writes a batch of results in one transaction and applies their effects: each region's latest
 * vote, the monitor's last check, hourly rollups, and status transitions with their incident and
 * event. Only rows actually inserted have effects, so a redelivered batch changes nothing.
 * Returns the events to publish once the transaction has committed.
 */
export async function storeResults(sql: Sql, results: readonly CheckResult[], now: Date): Promise<DomainEvent[]> {
  if (results.length === 0) return [];
  const rows = results.map((r) => ({
    monitor_id: r.monitor_id,
    scheduled_at: r.scheduled_at,
    region: r.region,
    checked_at: r.checked_at,
    agent_id: r.agent_id,
    ok: r.ok,
    status_code: r.status_code,
    dns_ms: r.timings.dns,
    connect_ms: r.timings.connect,
    tls_ms: r.timings.tls,
    ttfb_ms: r.timings.ttfb,
    total_ms: r.timings.total,
    error_class: r.error?.class ?? null,
    error_message: r.error?.message ?? null,
    attempts: r.attempts,
  }));
  return sql.begin(async (tx) => {
    // Results of monitors deleted meanwhile are dropped by the join.
    const inserted = await tx<Inserted[]>`
      insert into check_results (monitor_id, scheduled_at, region, checked_at, agent_id, ok, status_code,
        dns_ms, connect_ms, tls_ms, ttfb_ms, total_ms, error_class, error_message, attempts)
      select r.monitor_id, r.scheduled_at, r.region, r.checked_at, r.agent_id, r.ok, r.status_code,
        r.dns_ms, r.connect_ms, r.tls_ms, r.ttfb_ms, r.total_ms, r.error_class, r.error_message, r.attempts
      from jsonb_to_recordset(${tx.json(rows as never)}) as r(monitor_id uuid, scheduled_at timestamptz, region text,
        checked_at timestamptz, agent_id text, ok boolean, status_code smallint, dns_ms real, connect_ms real, tls_ms real,
        ttfb_ms real, total_ms real, error_class text, error_message text, attempts smallint)
      join monitors m on m.id = r.monitor_id
      on conflict do nothing
      returning monitor_id, scheduled_at, region, checked_at, ok, total_ms,
        case when error_class is null then null else coalesce(error_message, error_class) end as error`;
    if (inserted.length === 0) return [];
    await applyVotes(tx, inserted);
    return evaluate(tx, [...new Set(inserted.map((r) => r.monitor_id))], now);
  });
}

async function applyVotes(tx: Db, inserted: readonly Inserted[]): Promise<void> {
  const batch = tx.json(inserted as never);
  const shape = tx`(monitor_id uuid, scheduled_at timestamptz, region text, checked_at timestamptz, ok boolean, total_ms real, error text)`;
  await tx`
    insert into monitor_regions (monitor_id, region, ok, scheduled_at, error)
    select distinct on (monitor_id, region) monitor_id, region, ok, scheduled_at, error
    from jsonb_to_recordset(${batch}) as r${shape}
    order by monitor_id, region, scheduled_at desc
    on conflict (monitor_id, region) do update
      set ok = excluded.ok, scheduled_at = excluded.scheduled_at, error = excluded.error
      where monitor_regions.scheduled_at < excluded.scheduled_at`;
  await tx`
    update monitors m set last_checked_at = greatest(m.last_checked_at, r.at)
    from (select monitor_id, max(checked_at) as at from jsonb_to_recordset(${batch}) as r${shape} group by monitor_id) r
    where m.id = r.monitor_id`;
  await tx`
    insert into check_rollups (monitor_id, region, hour, checks, failures, total_ms_sum, total_ms_max)
    select monitor_id, region, date_trunc('hour', scheduled_at), count(*), count(*) filter (where not ok), sum(total_ms), max(total_ms)
    from jsonb_to_recordset(${batch}) as r${shape}
    group by 1, 2, 3
    on conflict (monitor_id, hour, region) do update set
      checks = check_rollups.checks + excluded.checks,
      failures = check_rollups.failures + excluded.failures,
      total_ms_sum = check_rollups.total_ms_sum + excluded.total_ms_sum,
      total_ms_max = greatest(check_rollups.total_ms_max, excluded.total_ms_max)`;
}

interface MonitorRow {
  id: string;
  project_id: string;
  name: string;
  url: string;
  status: MonitorHealth;
  active: boolean;
  interval_seconds: number;
}

/** Re-evaluates monitors under a row lock, so concurrent ingesters never transition one twice. */
async function evaluate(tx: Db, monitorIds: string[], now: Date): Promise<DomainEvent[]> {
  const monitors = await tx<MonitorRow[]>`
    select id, project_id, name, url, status, active, interval_seconds from monitors
    where id = any(${tx.array(monitorIds)}::uuid[]) order by id for update`;
  const votes = await tx<{ monitor_id: string; region: string; ok: boolean; scheduled_at: string; error: string | null }[]>`
    select monitor_id, region, ok, scheduled_at, error from monitor_regions where monitor_id = any(${tx.array(monitorIds)}::uuid[])`;
  const events: DomainEvent[] = [];
  for (const m of monitors) {
    if (!m.active) continue;
    const mine = votes
      .filter((v) => v.monitor_id === m.id)
      .map((v) => ({ region: v.region, ok: v.ok, scheduledAt: new Date(v.scheduled_at), error: v.error }));
    const e = evaluateMonitor(m.status, mine, now, staleAfter(m.interval_seconds));
    if (e.status === m.status) continue;
    await tx`update monitors set status = ${e.status} where id = ${m.id}`;
    if (!e.transition) continue;
    const latest = mine.filter((v) => e.voting.includes(v.region)).reduce((t, v) => Math.max(t, v.scheduledAt.getTime()), 0);
    const at = new Date(latest || now.getTime()).toISOString();
    const subject = { type: 'monitor' as const, id: m.id, name: m.name };
    if (e.transition === 'down') {
      const [incident] = await tx<{ id: string }[]>`
        insert into incidents (monitor_id, started_at, cause, regions)
        values (${m.id}, ${at}, ${e.cause}, ${tx.array(e.failing)}::text[])
        on conflict (monitor_id) where ended_at is null do nothing
        returning id`;
      if (!incident) continue;
      events.push(
        await recordEvent(tx, {
          kind: 'monitor.down',
          occurred_at: at,
          project_id: m.project_id,
          subject,
          data: { url: m.url, regions: e.failing, cause: e.cause, incident_id: incident.id, started_at: at },
        }),
      );
    } else {
      const [incident] = await tx<{ id: string; started_at: string; duration: number }[]>`
        update incidents set ended_at = greatest(started_at, ${at}::timestamptz)
        where monitor_id = ${m.id} and ended_at is null
        returning id, started_at, floor(extract(epoch from (ended_at - started_at)))::int as duration`;
      if (!incident) continue;
      events.push(
        await recordEvent(tx, {
          kind: 'monitor.up',
          occurred_at: at,
          project_id: m.project_id,
          subject,
          data: { url: m.url, incident_id: incident.id, duration_seconds: incident.duration },
        }),
      );
    }
  }
  return events;
}
