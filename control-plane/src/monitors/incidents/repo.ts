import type { Db } from '../../platform/db/sql.ts';
import type { AppliedChange, CloseIncident, IncidentChange, OpenIncident } from './rules.ts';

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
