import type { DomainEvent } from '../../../../shared/src/contracts/events.ts';
import { componentCondition, incidentImpacts, type ComponentState, type IncidentImpact } from '../overall.ts';

/**
 * The rules of a status page's incidents, as pure functions (docs/status-pages.md, "Incidents";
 * ADR 0038): what an outage event is, what a draft from it says and how heavy it is, what the
 * outage's end does to an incident, and which impact reaches the banner.
 */

export const incidentStatuses = ['investigating', 'identified', 'monitoring', 'resolved'] as const;
export type IncidentStatus = (typeof incidentStatuses)[number];

/** How a status is written for readers. */
export const statusWords: Record<IncidentStatus, string> = {
  investigating: 'Investigating',
  identified: 'Identified',
  monitoring: 'Monitoring',
  resolved: 'Resolved',
};

export const impactWords: Record<IncidentImpact, string> = {
  none: 'No impact',
  minor: 'Minor',
  major: 'Major',
  critical: 'Critical',
};

/** The heaviest of these impacts; `none` for none at all. */
export function highestImpact(impacts: readonly IncidentImpact[]): IncidentImpact {
  let best = 0;
  for (const i of impacts) best = Math.max(best, incidentImpacts.indexOf(i));
  return incidentImpacts[best]!;
}

/** One outage of a monitor or heartbeat as the drafter reads it from a down or an up. */
export interface Outage {
  /** The same for the down and the up of one outage: `monitor:<incident id>`, `heartbeat:<id>:<down since>`. */
  key: string;
  edge: 'start' | 'end';
  project_id: string;
  subject: { type: 'monitor' | 'heartbeat'; id: string; name: string };
  /** The monitor's incident (GET /monitors/{id}/incidents); null for a heartbeat. */
  monitor_incident_id: string | null;
  /** When it began: the down's instant, or for an up what its data tells (null when it does not). */
  started_at: string | null;
  /** When it ended: the up's instant; null for a down. */
  ended_at: string | null;
}

const isoOf = (v: unknown): string | null => {
  if (typeof v !== 'string') return null;
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
};

/**
 * The outage a monitor.down/up or heartbeat.down/up reports; null for any other event, or one
 * that does not say which outage it is (a monitor event without its incident, a heartbeat event
 * without `down_since`).
 */
export function outageOf(e: Pick<DomainEvent, 'kind' | 'occurred_at' | 'project_id' | 'subject' | 'data'>): Outage | null {
  const edge =
    e.kind === 'monitor.down' || e.kind === 'heartbeat.down'
      ? 'start'
      : e.kind === 'monitor.up' || e.kind === 'heartbeat.up'
        ? 'end'
        : null;
  if (!edge || (e.subject.type !== 'monitor' && e.subject.type !== 'heartbeat')) return null;
  const at = isoOf(e.occurred_at);
  if (!at) return null;
  const subject = { type: e.subject.type, id: e.subject.id, name: e.subject.name };
  if (e.subject.type === 'monitor') {
    const incident = typeof e.data.incident_id === 'string' ? e.data.incident_id : null;
    if (!incident) return null;
    const duration = typeof e.data.duration_seconds === 'number' ? e.data.duration_seconds : null;
    const started = edge === 'start' ? at : duration === null ? null : new Date(Date.parse(at) - duration * 1000).toISOString();
    return {
      key: `monitor:${incident}`,
      edge,
      project_id: e.project_id,
      subject,
      monitor_incident_id: incident,
      started_at: started,
      ended_at: edge === 'end' ? at : null,
    };
  }
  const since = isoOf(e.data.down_since);
  if (!since) return null;
  return {
    key: `heartbeat:${e.subject.id}:${since}`,
    edge,
    project_id: e.project_id,
    subject,
    monitor_incident_id: null,
    started_at: since,
    ended_at: edge === 'end' ? at : null,
  };
}

/**
 * The impact of a draft, as the banner rule sees the component when its outage began: `major`
 * for a component down. Null: no draft, because the component counted as under maintenance (an
 * outage during planned work is expected, and the page announces the maintenance already).
 */
export function draftImpact(state: ComponentState): IncidentImpact | null {
  switch (componentCondition(state)) {
    case 'down':
      return 'major';
    case 'degraded':
      return 'minor';
    case 'maintenance':
      return null;
    default:
      // A down event whose state reads otherwise (a status not known to the rule): the event is what happened.
      return 'major';
  }
}

/** What a draft says: its title, its first update, the update that resolves it and the one that reopens it, by the name the page shows. */
export function draftTexts(name: string): { title: string; opening: string; resolved: string; again: string } {
  return {
    title: `${name} is down`,
    opening: `${name} is not working. We are looking into it.`,
    resolved: `${name} is working again.`,
    again: `${name} is not working again. We are looking into it.`,
  };
}

/** An outage that starts this soon after the same subject's previous one ended on a page continues its incident. */
export const FLAP_WINDOW_MS = 15 * 60_000;

/** The page's latest incident drafted from the same monitor or heartbeat, as a new outage of it sees it. */
export interface PreviousDraft {
  /** When its outage ended (the drafter's record); null while it has not. */
  ended_at: string | null;
  status: IncidentStatus;
  /** Resolved by the drafter at its outage's end, with no person's word on it. */
  resolved_on_its_own: boolean;
}

/**
 * What a new outage does on a page: `draft` a new incident, or `reopen` the previous one of the
 * same subject, when that outage ended within FLAP_WINDOW_MS before this one began and the drafter
 * resolved it on its own. A flapping service is then one incident whose timeline says it went down
 * again, not an incident per flap (nor a message to every subscriber per flap). An incident a
 * person resolved, or spoke for, is theirs: a new outage is a new draft.
 */
export function onOutageStart(previous: PreviousDraft | null, startedAt: string): 'draft' | 'reopen' {
  if (!previous || previous.ended_at === null || previous.status !== 'resolved' || !previous.resolved_on_its_own) return 'draft';
  const gap = Date.parse(startedAt) - Date.parse(previous.ended_at);
  return gap >= 0 && gap <= FLAP_WINDOW_MS ? 'reopen' : 'draft';
}

/** An incident as the outage's end sees it. */
export interface IncidentAtEnd {
  status: IncidentStatus;
  published: boolean;
  /** Published by a person (rather than on its own, on a page that publishes drafts at once). */
  published_by_person: boolean;
  /** A person posted one of its updates. */
  person_posted: boolean;
}

/**
 * What the end of the outage an incident was drafted from does to it:
 * - `resolve`: a "resolved" update is added at the outage's end, and the incident is resolved.
 *   For a draft (nothing public is said) and for an incident published on its own that no person
 *   has written on: the outage's end is all there is to tell.
 * - `suggest`: the end is recorded on the incident, and the dashboard offers a resolved update
 *   ready to post. Once a person speaks for an incident in public (publishes it, or posts an
 *   update), the drafter does not speak over them: they may know the fix is not finished.
 * - `nothing`: it is resolved already.
 */
export function onOutageEnd(i: IncidentAtEnd): 'resolve' | 'suggest' | 'nothing' {
  if (i.status === 'resolved') return 'nothing';
  if (!i.published) return 'resolve';
  if (i.published_by_person || i.person_posted) return 'suggest';
  return 'resolve';
}
