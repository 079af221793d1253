import type { Db } from '../../platform/db/sql.ts';
import type { DegradedChange } from './degraded.ts';
import type { RegionalChange } from './regional.ts';
import type {
  AppliedChange,
  AppliedDegraded,
  AppliedRegional,
  CloseIncident,
  IncidentChange,
  OpenIncident,
  RegionEvidence,
} from './rules.ts';

/**
 * Applies one change of incidents/rules.ts to a monitor's incidents, in the caller's transaction.
 * Returns it with what the database assigned, or null when there was nothing to do: a monitor
 * has at most one open incident (a partial unique index), so a second open and a close with
 * none open change nothing, and the caller records no event for them.
 */
export async function applyIncidentChange(tx: Db, monitorId: string, change: IncidentChange): Promise<AppliedChange | null> {
  return change.type === 'open' ? openIncident(tx, monitorId, change) : closeIncident(tx, monitorId, change);
}

async function openIncident(tx: Db, monitorId: string, change: OpenIncident): Promise<AppliedChange | null> {
  const [incident] = await tx<{ id: string }[]>`
    insert into incidents (monitor_id, started_at, cause, regions, evidence)
    values (${monitorId}, ${change.started_at}, ${change.cause}, ${tx.array(change.regions)}::text[], ${tx.json(change.evidence as never)})
    on conflict (monitor_id) where ended_at is null do nothing
    returning id`;
  return incident ? { ...change, incident_id: incident.id } : null;
}

async function closeIncident(tx: Db, monitorId: string, change: CloseIncident): Promise<AppliedChange | null> {
  // Never before it started, whatever instant the votes give.
  const [incident] = await tx<{ id: string; duration: number }[]>`
    update incidents set ended_at = greatest(started_at, ${change.ended_at}::timestamptz)
    where monitor_id = ${monitorId} and ended_at is null
    returning id, floor(extract(epoch from (ended_at - started_at)))::int as duration`;
  return incident ? { ...change, incident_id: incident.id, duration_seconds: incident.duration } : null;
}

/**
 * Applies a regional change (incidents/regional.ts) and mirrors the open incident's regions on the
 * monitor, in the caller's transaction. Null when there was nothing to do (one already open, none
 * left to close); a widening is applied and returned, but records no event.
 */
export async function applyRegionalChange(
  tx: Db,
  monitorId: string,
  change: RegionalChange,
  evidence: readonly RegionEvidence[],
): Promise<AppliedRegional | null> {
  if (change.type === 'open') {
    const [row] = await tx<{ id: string }[]>`
      insert into regional_incidents (monitor_id, started_at, cause, regions, evidence)
      values (${monitorId}, ${change.started_at}, ${change.cause}, ${tx.array(change.regions)}::text[], ${tx.json(evidence as never)})
      on conflict (monitor_id) where ended_at is null do nothing
      returning id`;
    await tx`update monitors set regional_regions = ${tx.array(change.regions)}::text[] where id = ${monitorId}`;
    return row ? { ...change, incident_id: row.id, evidence: [...evidence] } : null;
  }
  if (change.type === 'widen') {
    const [row] = await tx<{ id: string }[]>`
      update regional_incidents set regions = ${tx.array(change.regions)}::text[]
      where monitor_id = ${monitorId} and ended_at is null returning id`;
    await tx`update monitors set regional_regions = ${tx.array(change.regions)}::text[] where id = ${monitorId}`;
    return row ? { ...change, incident_id: row.id } : null;
  }
  await tx`update monitors set regional_regions = null where id = ${monitorId}`;
  const [row] = await tx<{ id: string; regions: string[]; duration: number }[]>`
    update regional_incidents set ended_at = greatest(started_at, ${change.ended_at}::timestamptz)
    where monitor_id = ${monitorId} and ended_at is null
    returning id, regions, floor(extract(epoch from (ended_at - started_at)))::int as duration`;
  return row
    ? { type: 'close', incident_id: row.id, ended_at: change.ended_at, regions: row.regions, duration_seconds: row.duration }
    : null;
}

/**
 * Applies a degraded-period change (incidents/degraded.ts) and mirrors the open period's regions on
 * the monitor, in the caller's transaction. Null when there was nothing to do (one already open,
 * none left to close); a widening is applied and returned, but records no event.
 */
export async function applyDegradedChange(tx: Db, monitorId: string, change: DegradedChange): Promise<AppliedDegraded | null> {
  if (change.type === 'open') {
    const [row] = await tx<{ id: string }[]>`
      insert into degraded_periods (monitor_id, started_at, cause, regions)
      values (${monitorId}, ${change.started_at}, ${change.cause}, ${tx.array(change.regions)}::text[])
      on conflict (monitor_id) where ended_at is null do nothing
      returning id`;
    await tx`update monitors set degraded_regions = ${tx.array(change.regions)}::text[] where id = ${monitorId}`;
    return row ? { ...change, period_id: row.id } : null;
  }
  if (change.type === 'widen') {
    const [row] = await tx<{ id: string }[]>`
      update degraded_periods set regions = ${tx.array(change.regions)}::text[]
      where monitor_id = ${monitorId} and ended_at is null returning id`;
    await tx`update monitors set degraded_regions = ${tx.array(change.regions)}::text[] where id = ${monitorId}`;
    return row ? { ...change, period_id: row.id } : null;
  }
  await tx`update monitors set degraded_regions = null where id = ${monitorId}`;
  const [row] = await tx<{ id: string; regions: string[]; duration: number }[]>`
    update degraded_periods set ended_at = greatest(started_at, ${change.ended_at}::timestamptz)
    where monitor_id = ${monitorId} and ended_at is null
    returning id, regions, floor(extract(epoch from (ended_at - started_at)))::int as duration`;
  return row ? { type: 'close', period_id: row.id, ended_at: change.ended_at, regions: row.regions, duration_seconds: row.duration } : null;
}
