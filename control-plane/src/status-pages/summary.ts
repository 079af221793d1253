import type { Announcement } from '../maintenance/service.ts';
import { monitorStatuses } from '../monitors/schemas.ts';
import { formatTimestamp } from '../platform/http/time.ts';
import type { HeartbeatStatus } from '../heartbeats/state.ts';
import type { PublicIncident } from './incidents/service.ts';
import { highestImpact } from './incidents/rules.ts';
import { componentCondition, raisedBy, type ComponentCondition, type IncidentImpact, type OverallLevel } from './overall.ts';
import type { StatusPageComponent } from './schemas.ts';
import type { PublicStatusPage } from './service.ts';

/**
 * A status page as JSON for other sites' widgets (`/status/<slug>/summary.json`, documented in
 * docs/status-pages.md, "Feeds and the JSON summary"): what the page shows now, in a shape that
 * stays. Only what the page itself shows: names, states in words, incidents and maintenance;
 * never an id of a monitor or the project, a URL, a setting or an error text.
 */

export interface Summary {
  page: { title: string; description: string; url: string; updated_at: string };
  status: { level: OverallLevel; text: string };
  components: {
    name: string;
    description: string;
    group: string;
    type: 'monitor' | 'heartbeat';
    status: OverallLevel;
    text: string;
  }[];
  incidents: {
    id: string;
    title: string;
    impact: IncidentImpact;
    status: PublicIncident['status'];
    started_at: string;
    updated_at: string;
    url: string;
    components: string[];
  }[];
  maintenance: { name: string; description: string; starts_at: string; ends_at: string; in_progress: boolean; components: string[] }[];
}

/** A component's own state as a level: an outage of one component is a major one for it. */
const levelOf: Record<ComponentCondition, OverallLevel> = {
  maintenance: 'maintenance',
  down: 'major_outage',
  degraded: 'degraded',
  operational: 'operational',
  // Paused or never checked: nothing is known to be wrong (as the banner counts it); `text` says which.
  uncounted: 'operational',
};

const monitorWords: Record<number, string> = {
  [monitorStatuses.pending]: 'Pending',
  [monitorStatuses.up]: 'Up',
  [monitorStatuses.down]: 'Down',
  [monitorStatuses.paused]: 'Paused',
  [monitorStatuses.degraded]: 'Degraded',
};

/** The word the page shows for a component's state. */
export function componentText(c: StatusPageComponent): string {
  if (c.in_maintenance) return 'Maintenance';
  if (c.type === 'monitor') return monitorWords[Number(c.status)] ?? 'Pending';
  const s = String(c.status);
  return s[0]!.toUpperCase() + s.slice(1);
}

/**
 * A component's status in the summary: its own state as a level (maintenance, down as
 * `major_outage`, degraded or late as `degraded`, else `operational`), raised by the heaviest
 * impact of the ongoing published incidents that name it, as the banner is raised by the page's.
 */
export function componentStatus(c: StatusPageComponent, impacts: readonly IncidentImpact[]): OverallLevel {
  const own =
    levelOf[
      componentCondition(
        c.type === 'monitor'
          ? { type: 'monitor', status: Number(c.status), in_maintenance: c.in_maintenance }
          : { type: 'heartbeat', status: c.status as HeartbeatStatus, in_maintenance: c.in_maintenance },
      )
    ];
  return raisedBy(own, highestImpact(impacts));
}

/** Where a page's things are read: its own address, or its host name when it has one. */
export interface PublicAddresses {
  page: string;
  incident: (id: string) => string;
}

export function summaryOf(found: PublicStatusPage, ongoing: readonly PublicIncident[], at: Date, addresses: PublicAddresses): Summary {
  const { page, groups } = found;
  const impactsOf = new Map<string, IncidentImpact[]>();
  for (const i of ongoing) for (const key of i.component_keys) impactsOf.set(key, [...(impactsOf.get(key) ?? []), i.impact]);
  const shown = groups.flatMap((g) => g.components);
  const names = new Map(shown.map((c) => [`${c.type}:${c.id}`, c.display_name ?? c.name]));
  return {
    page: { title: page.title, description: page.description, url: addresses.page, updated_at: formatTimestamp(at.toISOString()) },
    status: { level: page.overall.level, text: page.overall.text },
    components: groups.flatMap((g) =>
      g.components.map((c) => ({
        name: c.display_name ?? c.name,
        description: c.description,
        group: g.name,
        type: c.type,
        status: componentStatus(c, impactsOf.get(`${c.type}:${c.id}`) ?? []),
        text: componentText(c),
      })),
    ),
    incidents: ongoing.map((i) => ({
      id: i.id,
      title: i.title,
      impact: i.impact,
      status: i.status,
      started_at: i.created_at,
      updated_at: i.updates[0]?.at ?? i.created_at,
      url: addresses.incident(i.id),
      components: i.components,
    })),
    maintenance: found.maintenance.map((a) => ({
      name: a.name,
      description: a.description,
      starts_at: a.starts_at,
      ends_at: a.ends_at,
      in_progress: a.in_progress,
      components: coveredNames(a, names),
    })),
  };
}

/** The names of what a maintenance window covers of the page (all of it for a window over the whole project). */
export function coveredNames(a: Announcement, names: ReadonlyMap<string, string>): string[] {
  if (a.monitor_ids === null) return [...names.values()];
  return [...a.monitor_ids.map((id) => `monitor:${id}`), ...(a.heartbeat_ids ?? []).map((id) => `heartbeat:${id}`)]
    .map((key) => names.get(key))
    .filter((n): n is string => n !== undefined);
}
