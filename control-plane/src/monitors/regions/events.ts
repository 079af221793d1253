import { createHash } from 'node:crypto';
import { DEPLOYMENT_PROJECT_ID, type DomainEvent } from '../../../../shared/src/contracts/events.ts';
import type { RegionRecord } from './health.ts';

/** What the judgement of a region was made from, kept with its row and its events. */
export interface RegionDetail {
  agents: number;
  canary_agents: number;
  canary_agents_failing: number;
  compared: number;
  disagreeing: number;
}

/** A stable uuid for a region name (name-based, SHA-1, RFC 9562 version 5 layout), as an event's subject id. */
export function regionSubjectId(region: string): string {
  const h = createHash('sha1').update(`uptime-region:${region}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
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
