import type { Assignment } from '../../../../shared/src/contracts/monitoring.ts';
import type { Names } from '../../../../shared/src/subjects.ts';
import type { AssignableMonitor } from '../repo.ts';
import { moveIntoBasicAuth } from '../url-credentials.ts';

export type { AssignableMonitor } from '../repo.ts';

/** A live agent as the assigner sees it: its region, and the monitor types it runs (null: http only). */
export interface LiveAgent {
  region: string;
  checkTypes: readonly string[] | null;
}

/**
 * The live regions, each with the monitor types every one of its live agents runs: agents of a
 * region share its monitors among them, so a monitor of a type some agent there does not know
 * (one not yet upgraded) could land on that agent and fail every check.
 */
export function regionTypes(agents: Iterable<LiveAgent>): Map<string, ReadonlySet<string>> {
  const out = new Map<string, Set<string>>();
  for (const agent of agents) {
    const types = new Set(agent.checkTypes ?? ['http']);
    const known = out.get(agent.region);
    if (known === undefined) out.set(agent.region, types);
    else for (const t of known) if (!types.has(t)) known.delete(t);
  }
  return out;
}

/**
 * The KV entries a monitor should have: one per region it is checked from; none when paused. A
 * live region whose agents do not all run the monitor's type is left out until they do (a region
 * with no live agent keeps a monitor that names it: its agents' types are not known yet).
 * Credentials still written into a stored URL travel sealed, like the basic-auth password,
 * never in the URL (`sealPassword` seals with the check-credentials key).
 */
export function desiredEntries(
  stored: AssignableMonitor,
  liveRegions: ReadonlyMap<string, ReadonlySet<string>>,
  names: Names,
  sealPassword: (password: string) => string,
): Map<string, Assignment> {
  const out = new Map<string, Assignment>();
  if (!stored.active) return out;
  const m = moveIntoBasicAuth(stored, sealPassword);
  for (const region of m.regions ?? [...liveRegions.keys()]) {
    const types = liveRegions.get(region);
    if (types !== undefined && !types.has(m.type)) continue;
    out.set(names.keys.assignment(region, m.id), assignmentOf(m, region, m.updated_at));
  }
  return out;
}

/**
 * A monitor as the agent of `region` gets it (credentials already moved into basic auth): what the
 * assigner writes, and what "test now" sends, so a test runs what the schedule runs.
 */
export function assignmentOf(
  m: Omit<AssignableMonitor, 'active' | 'regions' | 'updated_at'>,
  region: string,
  revision: string,
): Assignment {
  return {
    monitor_id: m.id,
    project_id: m.project_id,
    region,
    url: m.url,
    method: m.method,
    valid_http_codes: m.valid_http_codes,
    basic_auth_username: m.basic_auth_username,
    basic_auth_password_sealed: m.basic_auth_password_sealed,
    interval: m.interval_seconds,
    timeout: m.timeout_seconds,
    follow_redirects: m.follow_redirects,
    // A plain http monitor's entry is as it was before types existed.
    ...(m.type !== 'http' ? { type: m.type } : {}),
    ...(m.settings_sealed !== null ? { settings_sealed: m.settings_sealed } : {}),
    ...(m.assertions.length > 0 ? { assertions: m.assertions } : {}),
    revision,
  };
}
