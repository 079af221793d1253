/**
 * What a monitor's status change does to its incidents, as pure functions (no I/O, the clock is a
 * parameter); incidents/repo.ts applies the result and the ingest records the event.
 *
 * - A down transition opens an incident: it starts at the slot the failing run began (with one
 *   round of confirmation, the newest scheduled_at among the voting regions: the check that
 *   tipped the quorum, not the moment the batch was written; `now` when no vote counts), its
 *   cause is the status rule's cause (the first failing region's error, '' when none gave one),
 *   its regions are the failing regions and its evidence what every region with a fresh result
 *   saw (abstaining ones marked).
 * - An up transition closes the open incident at the slot the passing run began.
 * - Anything else changes no incident.
 *
 * An applied change is reported as monitor.down or monitor.up, occurring at the change's instant.
 * The repo may apply nothing (an incident already open, none left to close): then no event.
 */
import type { DomainEvent } from '../../../../shared/src/contracts/events.ts';
import { streakSince, type Evaluation, type RegionVote } from '../status.ts';
import { withoutUrlCredentials } from '../url-credentials.ts';

/** What the rule reads of one monitor. An object, so that more of the monitor's state can be added without changing callers. */
export interface IncidentInput {
  /** The status rule's verdict (status.ts `evaluateMonitor`). */
  evaluation: Evaluation;
  /** The votes the verdict was reached from; votes outside `evaluation.voting` are ignored. */
  votes: readonly RegionVote[];
}

/** Open the monitor's incident; instants are ISO 8601 strings, as stored and as published. */
export interface OpenIncident {
  type: 'open';
  started_at: string;
  cause: string;
  regions: string[];
  evidence: RegionEvidence[];
}

/** What one region saw when an incident opened. */
export interface RegionEvidence {
  region: string;
  ok: boolean;
  status_code: number | null;
  error: string | null;
  /** Milliseconds the check took; null when unknown. */
  total_ms: number | null;
  /** The slot of the result. */
  scheduled_at: string;
  /** The region was degraded: its result did not vote. */
  abstained: boolean;
}

/** Close the monitor's open incident. */
export interface CloseIncident {
  type: 'close';
  ended_at: string;
}

export type IncidentChange = OpenIncident | CloseIncident;

/** A change as the repo applied it, with what the database assigned. */
export type AppliedChange = (OpenIncident & { incident_id: string }) | (CloseIncident & { incident_id: string; duration_seconds: number });

/** The monitor as events name it; `url` as stored (credentials are removed here). */
export interface EventMonitor {
  id: string;
  project_id: string;
  name: string;
  url: string;
}

/**
 * The incident changes a monitor's evaluation calls for. A list, applied in order: today it holds
 * at most one change, but an evaluation may come to touch several incidents of one monitor.
 */
export function incidentChanges(input: IncidentInput, now: Date): IncidentChange[] {
  const { evaluation: e } = input;
  if (!e.transition) return [];
  const at = transitionInstant(input, now);
  if (e.transition === 'down') return [{ type: 'open', started_at: at, cause: e.cause, regions: e.failing, evidence: evidenceOf(input) }];
  return [{ type: 'close', ended_at: at }];
}

/** Where the run that made the transition began, or `now` when no vote counts. */
function transitionInstant({ evaluation }: IncidentInput, now: Date): string {
  return new Date(streakSince(evaluation.streak) || now.getTime()).toISOString();
}

/** The regions that voted or abstained, in region order. */
export function evidenceOf({ evaluation: e, votes }: IncidentInput): RegionEvidence[] {
  const abstained = new Set(e.abstained);
  const voting = new Set(e.voting);
  return votes
    .filter((v) => voting.has(v.region) || abstained.has(v.region))
    .sort((a, b) => (a.region < b.region ? -1 : a.region > b.region ? 1 : 0))
    .map((v) => ({
      region: v.region,
      ok: v.ok,
      status_code: v.statusCode ?? null,
      error: v.error ?? null,
      total_ms: v.totalMs ?? null,
      scheduled_at: v.scheduledAt.toISOString(),
      abstained: abstained.has(v.region),
    }));
}

/** The event that reports an applied change (the outbox adds its id). */
export function incidentEvent(monitor: EventMonitor, applied: AppliedChange): Omit<DomainEvent, 'id'> {
  // Events reach integrations and outside consumers: never a password a stored URL still holds.
  const url = withoutUrlCredentials(monitor.url);
  const subject = { type: 'monitor' as const, id: monitor.id, name: monitor.name };
  if (applied.type === 'open') {
    return {
      kind: 'monitor.down',
      occurred_at: applied.started_at,
      project_id: monitor.project_id,
      subject,
      data: {
        url,
        regions: applied.regions,
        cause: applied.cause,
        incident_id: applied.incident_id,
        started_at: applied.started_at,
        evidence: applied.evidence,
      },
    };
  }
  return {
    kind: 'monitor.up',
    occurred_at: applied.ended_at,
    project_id: monitor.project_id,
    subject,
    data: { url, incident_id: applied.incident_id, duration_seconds: applied.duration_seconds },
  };
}

/** A regional change as the repo applied it. */
export type AppliedRegional =
  | { type: 'open'; incident_id: string; started_at: string; regions: string[]; cause: string; evidence: RegionEvidence[] }
  | { type: 'widen'; incident_id: string; regions: string[] }
  | { type: 'close'; incident_id: string; ended_at: string; regions: string[]; duration_seconds: number };

/** The event of a regional incident opening (monitor.regional_down) or closing (monitor.regional_up); a widening has none. */
export function regionalEvent(monitor: EventMonitor, applied: Exclude<AppliedRegional, { type: 'widen' }>): Omit<DomainEvent, 'id'> {
  const url = withoutUrlCredentials(monitor.url);
  const subject = { type: 'monitor' as const, id: monitor.id, name: monitor.name };
  if (applied.type === 'close') {
    return {
      kind: 'monitor.regional_up',
      occurred_at: applied.ended_at,
      project_id: monitor.project_id,
      subject,
      data: {
        url,
        scope: 'regional',
        regions: applied.regions,
        incident_id: applied.incident_id,
        duration_seconds: applied.duration_seconds,
      },
    };
  }
  return {
    kind: 'monitor.regional_down',
    occurred_at: applied.started_at,
    project_id: monitor.project_id,
    subject,
    data: {
      url,
      scope: 'regional',
      regions: applied.regions,
      cause: applied.cause,
      incident_id: applied.incident_id,
      started_at: applied.started_at,
      evidence: applied.evidence,
    },
  };
}

/** A degraded-period change as the repo applied it. */
export type AppliedDegraded =
  | { type: 'open'; period_id: string; started_at: string; regions: string[]; cause: string }
  | { type: 'widen'; period_id: string; regions: string[] }
  | { type: 'close'; period_id: string; ended_at: string; regions: string[]; duration_seconds: number };

/** The event of a degraded period opening (monitor.degraded) or closing (monitor.restored); a widening has none. */
export function degradedEvent(monitor: EventMonitor, applied: Exclude<AppliedDegraded, { type: 'widen' }>): Omit<DomainEvent, 'id'> {
  const url = withoutUrlCredentials(monitor.url);
  const subject = { type: 'monitor' as const, id: monitor.id, name: monitor.name };
  if (applied.type === 'close') {
    return {
      kind: 'monitor.restored',
      occurred_at: applied.ended_at,
      project_id: monitor.project_id,
      subject,
      data: { url, scope: 'degraded', regions: applied.regions, period_id: applied.period_id, duration_seconds: applied.duration_seconds },
    };
  }
  return {
    kind: 'monitor.degraded',
    occurred_at: applied.started_at,
    project_id: monitor.project_id,
    subject,
    data: {
      url,
      scope: 'degraded',
      regions: applied.regions,
      cause: applied.cause,
      period_id: applied.period_id,
      started_at: applied.started_at,
    },
  };
}
