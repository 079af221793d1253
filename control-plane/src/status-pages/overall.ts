import type { HeartbeatStatus } from '../heartbeats/state.ts';
import { monitorStatuses } from '../monitors/schemas.ts';

/**
 * The banner of a status page, as pure functions (docs/status-pages.md, "The banner"): what each
 * component counts as, then one level for the page.
 *
 * A component counts as
 * - `maintenance` while a maintenance window covers it now, whatever its status (an outage
 *   during planned work is expected, and is not reported as one);
 * - `down`: a monitor down (2), a heartbeat down;
 * - `degraded`: a monitor degraded (4), a heartbeat late;
 * - `operational`: a monitor up (1), a heartbeat up or running;
 * - `uncounted`: a monitor pending (0) or paused (3), a heartbeat new or paused: nothing is
 *   known of it, so it neither fails nor passes the page.
 *
 * The page, first rule that holds:
 * 1. `major_outage`: at least half of the counted components are down (all of them, or one of
 *    two, or two of four...);
 * 2. `partial_outage`: some counted component is down;
 * 3. `degraded`: some counted component is degraded;
 * 4. `maintenance`: some component is under maintenance (and nothing above holds);
 * 5. `operational`: otherwise, a page whose components are all uncounted included.
 * Counted = down, degraded or operational (components under maintenance and uncounted ones are
 * left out of the share).
 *
 * An incident's impact then raises the level, never lowers it: `minor` to at least `degraded`,
 * `major` to at least `partial_outage`, `critical` to `major_outage`. (Incidents written by
 * people will give it; without them it is `none`.)
 */

export const overallLevels = ['operational', 'maintenance', 'degraded', 'partial_outage', 'major_outage'] as const;
export type OverallLevel = (typeof overallLevels)[number];

export const incidentImpacts = ['none', 'minor', 'major', 'critical'] as const;
export type IncidentImpact = (typeof incidentImpacts)[number];

export type ComponentCondition = 'operational' | 'degraded' | 'down' | 'maintenance' | 'uncounted';

/** A component as the rule reads it: its subject's status now, and whether maintenance covers it now. */
export type ComponentState =
  { type: 'monitor'; status: number; in_maintenance: boolean } | { type: 'heartbeat'; status: HeartbeatStatus; in_maintenance: boolean };

/** What the banner says at each level. */
export const overallTexts: Record<OverallLevel, string> = {
  operational: 'All systems operational',
  maintenance: 'Under maintenance',
  degraded: 'Degraded performance',
  partial_outage: 'Partial outage',
  major_outage: 'Major outage',
};

const monitorConditions: Record<number, ComponentCondition> = {
  [monitorStatuses.pending]: 'uncounted',
  [monitorStatuses.up]: 'operational',
  [monitorStatuses.down]: 'down',
  [monitorStatuses.paused]: 'uncounted',
  [monitorStatuses.degraded]: 'degraded',
};

const heartbeatConditions: Record<HeartbeatStatus, ComponentCondition> = {
  new: 'uncounted',
  up: 'operational',
  running: 'operational',
  late: 'degraded',
  down: 'down',
  paused: 'uncounted',
};

export function componentCondition(c: ComponentState): ComponentCondition {
  if (c.in_maintenance) return 'maintenance';
  return c.type === 'monitor' ? (monitorConditions[c.status] ?? 'uncounted') : heartbeatConditions[c.status];
}

const impactFloor: Record<IncidentImpact, OverallLevel> = {
  none: 'operational',
  minor: 'degraded',
  major: 'partial_outage',
  critical: 'major_outage',
};

const rank = (level: OverallLevel) => overallLevels.indexOf(level);

/** A level raised by an incident's impact (never lowered): minor to degraded, major to partial outage, critical to major outage. */
export function raisedBy(level: OverallLevel, impact: IncidentImpact): OverallLevel {
  const floor = impactFloor[impact];
  return rank(floor) > rank(level) ? floor : level;
}

export interface Overall {
  level: OverallLevel;
  text: string;
}

/** The page's level from its components' states and the impact of its active incidents (the highest). */
export function overallStatus(components: readonly ComponentState[], impact: IncidentImpact = 'none'): Overall {
  const n = { operational: 0, degraded: 0, down: 0, maintenance: 0, uncounted: 0 };
  for (const c of components) n[componentCondition(c)]++;
  const counted = n.operational + n.degraded + n.down;
  const fromComponents: OverallLevel =
    n.down > 0 && n.down * 2 >= counted
      ? 'major_outage'
      : n.down > 0
        ? 'partial_outage'
        : n.degraded > 0
          ? 'degraded'
          : n.maintenance > 0
            ? 'maintenance'
            : 'operational';
  const level = raisedBy(fromComponents, impact);
  return { level, text: overallTexts[level] };
}
