import type { CheckResult } from '../../../../shared/src/contracts/monitoring.ts';
import type { DomainEvent } from '../../../../shared/src/contracts/events.ts';
import type { Db, Sql } from '../../platform/db/sql.ts';
import { recordEvent } from '../../platform/outbox.ts';
import { degradedChange, type DegradedChange, type DegradedState } from '../incidents/degraded.ts';
import { regionalChange, type RegionalChange, type RegionalState } from '../incidents/regional.ts';
import { applyDegradedChange, applyIncidentChange, applyRegionalChange } from '../incidents/repo.ts';
import {
  degradedEvent,
  evidenceOf,
  incidentChanges,
  incidentEvent,
  regionalEvent,
  type EventMonitor,
  type RegionEvidence,
} from '../incidents/rules.ts';
import {
  evaluateMonitor,
  staleAfter,
  type Evaluation,
  type MonitorHealth,
  type RegionVote,
  type Streak,
  type VerdictPolicy,
} from '../status.ts';
import { recordCertificates } from './certificates.ts';
import { columnsOf } from './columns.ts';

/** A monitor that got new rows: one row per region voting for it (one row without a region when none does). */
interface VoteRow {
  monitor_id: string;
  status: MonitorHealth;
  interval_seconds: number;
  quorum: number | null;
  confirm_down: number;
  confirm_up: number;
  verdict_prior: number;
  /** The streak's instants, epoch milliseconds (null for none). */
  verdict_prior_since: number | null;
  verdict_dir: -1 | 0 | 1;
  verdict_round: number | null;
  /** The regions of the open regional incident (null: none open). */
  regional_regions: string[] | null;
  alert_regional: boolean;
  /** The regions of the open degraded period (null: none open). */
  degraded_regions: string[] | null;
  alert_degraded: boolean;
  region: string | null;
  ok: boolean | null;
  /** scheduled_at, epoch milliseconds. */
  at: number | null;
  error: string | null;
  status_code: number | null;
  total_ms: number | null;
  /** The region is degraded (region_health): its vote is set aside. */
  abstain: boolean | null;
  /** Since when the region's results have failed without a pass, epoch milliseconds (null while it passes). */
  failing_since: number | null;
  degraded: boolean | null;
  /** Since when the region has been degraded without a break, epoch milliseconds (null while it is not). */
  degraded_since: number | null;
  degraded_reason: string | null;
}

interface Subject {
  id: string;
  status: MonitorHealth;
  interval_seconds: number;
  policy: VerdictPolicy;
  streak: Streak;
  regional: RegionalState;
  alertRegional: boolean;
  degraded: DegradedState;
  alertDegraded: boolean;
}

/**
 * Writes a batch of results in one transaction and applies their effects: each region's latest
 * vote and last check, hourly rollups, status transitions with their incident and event
 * (incidents/rules.ts decides, incidents/repo.ts writes), and the certificates checks presented
 * with their expiry warnings (certificates.ts).
 * Only rows actually inserted have effects, so a redelivered batch changes nothing.
 * Returns the events to publish once the transaction has committed.
 *
 * Two round trips whatever the batch size, and a third when a status changes: lock the batch's
 * monitors, then one statement writes everything the rows imply and returns the votes the
 * status rule needs.
 */
export async function storeResults(sql: Sql, results: readonly CheckResult[], now: Date): Promise<DomainEvent[]> {
  if (results.length === 0) return [];
  const ids = [...new Set(results.map((r) => r.monitor_id))].sort();
  return sql.begin(async (tx) => {
    // The row lock serialises concurrent ingesters per monitor and waits out a concurrent delete.
    // It is taken before the next statement starts, so that statement's snapshot holds every vote
    // committed by whoever held a lock before.
    const [{ n }] = (await tx<{ n: number }[]>`
      select count(*)::int as n from (select 1 from monitors where id = any(${ids}::uuid[]) order by id for no key update) l`) as unknown as [
      { n: number },
    ];
    let kept = results;
    if (n < ids.length) {
      // Results of monitors deleted meanwhile are dropped (rare: only then is the list read).
      const known = new Set((await tx<{ id: string }[]>`select id from monitors where id = any(${ids}::uuid[])`).map((m) => m.id));
      kept = results.filter((r) => known.has(r.monitor_id));
      if (kept.length === 0) return [];
    }
    const c = columnsOf(kept);
    const rows = await tx<VoteRow[]>`
      with ins as (
        insert into check_results (monitor_id, scheduled_at, region, checked_at, agent_id, ok, status_code,
          dns_ms, connect_ms, tls_ms, ttfb_ms, total_ms, error_class, error_message, attempts, degraded, extra)
        select r.* from unnest(${c.monitorId}::uuid[], ${c.scheduledAt}::timestamptz[], ${c.region}::text[], ${c.checkedAt}::timestamptz[],
          ${c.agentId}::text[], ${c.ok}::boolean[], ${c.statusCode}::smallint[], ${c.dns}::real[], ${c.connect}::real[], ${c.tls}::real[],
          ${c.ttfb}::real[], ${c.total}::real[], ${c.errorClass}::text[], ${c.errorMessage}::text[], ${c.attempts}::smallint[],
          ${c.degraded}::boolean[], ${c.extra}::jsonb[])
          as r(monitor_id, scheduled_at, region, checked_at, agent_id, ok, status_code, dns_ms, connect_ms, tls_ms, ttfb_ms, total_ms,
            error_class, error_message, attempts, degraded, extra)
        on conflict do nothing
        returning monitor_id, region, scheduled_at, checked_at, ok, total_ms, status_code,
          case when error_class is null then null else coalesce(error_message, error_class) end as error,
          coalesce(degraded, false) as degraded,
          case when degraded then (select a->>'message' from jsonb_array_elements(extra->'assertions') a
            where a->>'severity' = 'degraded' and a->>'passed' = 'false' limit 1) end as degraded_reason
      ), votes as (
        insert into monitor_regions as v (monitor_id, region, ok, scheduled_at, error, checked_at, status_code, total_ms, failing_since,
          degraded, degraded_since, degraded_reason)
        select distinct on (monitor_id, region) monitor_id, region, ok, scheduled_at, error, checked_at, status_code, total_ms,
          case when ok then null else scheduled_at end as failing_since,
          degraded, case when degraded then scheduled_at end as degraded_since, degraded_reason
        from ins order by monitor_id, region, ins.scheduled_at desc
        on conflict (monitor_id, region) do update
          set ok = excluded.ok, scheduled_at = excluded.scheduled_at, error = excluded.error, checked_at = excluded.checked_at,
            status_code = excluded.status_code, total_ms = excluded.total_ms,
            failing_since = case when excluded.ok then null else coalesce(v.failing_since, excluded.failing_since) end,
            degraded = excluded.degraded,
            degraded_since = case when excluded.degraded then coalesce(v.degraded_since, excluded.degraded_since) end,
            degraded_reason = excluded.degraded_reason
          where v.scheduled_at < excluded.scheduled_at
        returning monitor_id, region, ok, scheduled_at, error, status_code, total_ms, failing_since, degraded, degraded_since, degraded_reason
      ), rollups as (
        insert into check_rollups as c (monitor_id, region, hour, checks, failures, total_ms_sum, total_ms_max)
        select monitor_id, region, date_trunc('hour', scheduled_at) as hour, count(*), count(*) filter (where not ok), sum(total_ms), max(total_ms)
        from ins group by monitor_id, hour, region order by monitor_id, hour, region
        on conflict (monitor_id, hour, region) do update set
          checks = c.checks + excluded.checks,
          failures = c.failures + excluded.failures,
          total_ms_sum = c.total_ms_sum + excluded.total_ms_sum,
          total_ms_max = greatest(c.total_ms_max, excluded.total_ms_max)
      ), touched as (
        select m.id, m.status, m.interval_seconds, m.quorum, m.confirm_down, m.confirm_up,
          m.verdict_prior, m.verdict_prior_since, m.verdict_dir, m.verdict_round, m.regional_regions, m.alert_regional,
          m.degraded_regions, m.alert_degraded
        from (select distinct monitor_id from ins) i
        join monitors m on m.id = i.monitor_id
        where m.active
      ), current as (
        -- This statement does not see its own upsert: the votes it wrote, and the others as they were.
        select monitor_id, region, ok, scheduled_at, error, status_code, total_ms, failing_since, degraded, degraded_since, degraded_reason
        from votes
        union all
        select r.monitor_id, r.region, r.ok, r.scheduled_at, r.error, r.status_code, r.total_ms, r.failing_since,
          r.degraded, r.degraded_since, r.degraded_reason
        from monitor_regions r
        where r.monitor_id in (select id from touched)
          and not exists (select 1 from votes v where v.monitor_id = r.monitor_id and v.region = r.region)
      )
      select t.id as monitor_id, t.status, t.interval_seconds, t.quorum, t.confirm_down, t.confirm_up,
        t.verdict_prior, t.verdict_dir, (extract(epoch from t.verdict_prior_since) * 1000)::float8 as verdict_prior_since,
        (extract(epoch from t.verdict_round) * 1000)::float8 as verdict_round, t.regional_regions, t.alert_regional,
        t.degraded_regions, t.alert_degraded,
        v.region, v.ok, (extract(epoch from v.scheduled_at) * 1000)::float8 as at, v.error, v.status_code, v.total_ms,
        (extract(epoch from v.failing_since) * 1000)::float8 as failing_since,
        v.degraded, (extract(epoch from v.degraded_since) * 1000)::float8 as degraded_since, v.degraded_reason,
        h.state = 'degraded' as abstain
      from touched t left join current v on v.monitor_id = t.id
      left join region_health h on h.region = v.region`;
    const { outcomes, regional, degraded } = evaluate(rows, now);
    const events = await applyEvaluations(tx, outcomes, now);
    if (regional.length > 0) events.push(...(await applyRegional(tx, regional)));
    if (degraded.length > 0) events.push(...(await applyDegraded(tx, degraded)));
    // The monitors the rows name are those with results stored now: a redelivered batch has none.
    events.push(...(await recordCertificates(tx, kept, rows)));
    return events;
  });
}

interface Outcome {
  monitor: Subject;
  evaluation: Evaluation;
  votes: RegionVote[];
}

interface RegionalPlan {
  monitor: Subject;
  change: RegionalChange;
  evidence: RegionEvidence[];
}

/**
 * The status rule over each monitor's votes: the monitors whose status or counted rounds change,
 * and those whose regional incident opens, widens or closes.
 */
function evaluate(rows: readonly VoteRow[], now: Date): { outcomes: Outcome[]; regional: RegionalPlan[]; degraded: DegradedPlan[] } {
  const byMonitor = new Map<string, { monitor: Subject; votes: RegionVote[] }>();
  for (const r of rows) {
    let entry = byMonitor.get(r.monitor_id);
    if (!entry) {
      const monitor: Subject = {
        id: r.monitor_id,
        status: r.status,
        interval_seconds: r.interval_seconds,
        policy: { quorum: r.quorum, confirmDown: r.confirm_down, confirmUp: r.confirm_up },
        streak: { prior: r.verdict_prior, priorSince: r.verdict_prior_since ?? 0, dir: r.verdict_dir, round: r.verdict_round ?? 0 },
        regional: r.regional_regions,
        alertRegional: r.alert_regional,
        degraded: r.degraded_regions,
        alertDegraded: r.alert_degraded,
      };
      entry = { monitor, votes: [] };
      byMonitor.set(r.monitor_id, entry);
    }
    if (r.region !== null) {
      entry.votes.push({
        region: r.region,
        ok: r.ok!,
        scheduledAt: new Date(r.at!),
        error: r.error,
        statusCode: r.status_code,
        totalMs: r.total_ms,
        abstain: r.abstain === true,
        failingSince: r.failing_since === null ? null : new Date(r.failing_since),
        degraded: r.degraded === true,
        degradedSince: r.degraded_since === null ? null : new Date(r.degraded_since),
        degradedReason: r.degraded_reason,
      });
    }
  }
  const outcomes: Outcome[] = [];
  const regional: RegionalPlan[] = [];
  const degraded: DegradedPlan[] = [];
  for (const { monitor, votes } of byMonitor.values()) {
    const evaluation = evaluateMonitor(monitor.status, votes, now, staleAfter(monitor.interval_seconds), monitor.policy, monitor.streak);
    if (evaluation.status !== monitor.status || (countsRounds(monitor.policy) && evaluation.streak !== monitor.streak)) {
      outcomes.push({ monitor, evaluation, votes });
    }
    const change = regionalChange(evaluation, votes, monitor.regional, now);
    if (change) regional.push({ monitor, change, evidence: change.type === 'open' ? evidenceOf({ evaluation, votes }) : [] });
    const policy = { confirmDown: monitor.policy.confirmDown, intervalMs: monitor.interval_seconds * 1000 };
    const d = degradedChange(evaluation, votes, monitor.degraded, policy, now);
    if (d) degraded.push({ monitor, change: d });
  }
  return { outcomes, regional, degraded };
}

interface DegradedPlan {
  monitor: Subject;
  change: DegradedChange;
}

/**
 * Degraded periods opened, widened or closed, with their events (monitor.degraded,
 * monitor.restored: alerts for the monitors that ask). The monitor's `degraded_regions` mirrors
 * the open period, so the next batch reads it with the monitor.
 */
async function applyDegraded(tx: Db, plans: readonly DegradedPlan[]): Promise<DomainEvent[]> {
  const details = new Map(
    (
      await tx<EventMonitor[]>`
        select id, project_id, name, url from monitors where id = any(${plans.map((p) => p.monitor.id)}::uuid[])`
    ).map((m) => [m.id, m]),
  );
  const events: DomainEvent[] = [];
  for (const { monitor, change } of plans) {
    const applied = await applyDegradedChange(tx, monitor.id, change);
    const named = details.get(monitor.id);
    if (applied && applied.type !== 'widen' && named) {
      events.push(await recordEvent(tx, degradedEvent(named, applied), { alert: monitor.alertDegraded }));
    }
  }
  return events;
}

/**
 * Regional incidents opened, widened or closed, with their events (recorded as alerts for the
 * monitors that ask for them). The monitor's `regional_regions` mirrors the open incident, so the
 * next batch reads it with the monitor.
 */
async function applyRegional(tx: Db, plans: readonly RegionalPlan[]): Promise<DomainEvent[]> {
  const details = new Map(
    (
      await tx<EventMonitor[]>`
        select id, project_id, name, url from monitors where id = any(${plans.map((p) => p.monitor.id)}::uuid[])`
    ).map((m) => [m.id, m]),
  );
  const events: DomainEvent[] = [];
  for (const { monitor, change, evidence } of plans) {
    const applied = await applyRegionalChange(tx, monitor.id, change, evidence);
    const named = details.get(monitor.id);
    if (applied && applied.type !== 'widen' && named) {
      events.push(await recordEvent(tx, regionalEvent(named, applied), { alert: monitor.alertRegional }));
    }
  }
  return events;
}

/** Only a monitor that confirms over several rounds needs its rounds kept between batches. */
function countsRounds(p: VerdictPolicy): boolean {
  return p.confirmDown > 1 || p.confirmUp > 1;
}

const instant = (ms: number) => (ms > 0 ? new Date(ms).toISOString() : null);

/** Status changes and counted rounds in one statement; then the incident each change calls for, with its event. */
async function applyEvaluations(tx: Db, outcomes: readonly Outcome[], now: Date): Promise<DomainEvent[]> {
  if (outcomes.length === 0) return [];
  const s = outcomes.map((o) => o.evaluation.streak);
  await tx`
    update monitors m set status = u.status, verdict_prior = u.prior, verdict_prior_since = u.prior_since,
      verdict_dir = u.dir, verdict_round = u.round
    from unnest(${outcomes.map((o) => o.monitor.id)}::uuid[], ${outcomes.map((o) => o.evaluation.status)}::smallint[],
      ${s.map((x) => x.prior)}::smallint[], ${s.map((x) => instant(x.priorSince))}::timestamptz[], ${s.map((x) => x.dir)}::smallint[],
      ${s.map((x) => instant(x.round))}::timestamptz[]) as u(id, status, prior, prior_since, dir, round)
    where m.id = u.id`;
  const planned = outcomes
    .filter((o) => o.evaluation.transition !== null)
    .map((o) => ({ id: o.monitor.id, changes: incidentChanges({ evaluation: o.evaluation, votes: o.votes }, now) }))
    .filter((p) => p.changes.length > 0);
  if (planned.length === 0) return [];
  const details = new Map(
    (
      await tx<EventMonitor[]>`
        select id, project_id, name, url from monitors where id = any(${planned.map((p) => p.id)}::uuid[])`
    ).map((m) => [m.id, m]),
  );
  const events: DomainEvent[] = [];
  for (const { id, changes } of planned) {
    for (const change of changes) {
      const applied = await applyIncidentChange(tx, id, change);
      if (applied) events.push(await recordEvent(tx, incidentEvent(details.get(id)!, applied)));
    }
  }
  return events;
}
