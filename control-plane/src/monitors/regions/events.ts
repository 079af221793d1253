import { DEPLOYMENT_PROJECT_ID, type DomainEvent } from '../../../../shared/src/contracts/events.ts';
import { nameUuid } from '../../../../shared/src/name-uuid.ts';
import type { RegionRecord } from './health.ts';

/** What the judgement of a region was made from, kept with its row and its events. */
export interface RegionDetail {
  agents: number;
  canary_agents: number;
  canary_agents_failing: number;
  compared: number;
  disagreeing: number;
}

/** A stable uuid for a region name, as an event's subject id. */
export function regionSubjectId(region: string): string {
  return nameUuid(`uptime-region:${region}`);
}

/**
 * region.degraded or region.recovered, about the deployment (DEPLOYMENT_PROJECT_ID), occurring
 * when the judgement changed. Not an alert of any project: no integration is notified.
 */
export function regionEvent(
  region: string,
  change: 'degraded' | 'recovered',
  c: { next: RegionRecord; prev: RegionRecord | null; detail: RegionDetail; now: Date },
): Omit<DomainEvent, 'id'> {
  const subject = { type: 'region' as const, id: regionSubjectId(region), name: region };
  const occurred_at = c.now.toISOString();
  if (change === 'degraded') {
    return {
      kind: 'region.degraded',
      occurred_at,
      project_id: DEPLOYMENT_PROJECT_ID,
      subject,
      data: { region, reason: c.next.reason, since: new Date(c.next.since).toISOString(), ...c.detail },
    };
  }
  const since = c.prev ? c.prev.since : c.next.since;
  return {
    kind: 'region.recovered',
    occurred_at,
    project_id: DEPLOYMENT_PROJECT_ID,
    subject,
    data: {
      region,
      reason: c.prev?.reason ?? null,
      degraded_since: new Date(since).toISOString(),
      duration_seconds: Math.max(0, Math.floor((c.now.getTime() - since) / 1000)),
      ...c.detail,
    },
  };
}
