import type { ApiContext } from '../../platform/http/context.ts';
import { formatTimestamp } from '../../platform/http/time.ts';
import { loadRegions } from './repo.ts';
import type { RegionView } from './schemas.ts';

/**
 * The probe regions of the deployment as the control plane judges them. Every signed-in user may
 * read them: they say why their monitors' results from a region are set aside, and hold no
 * project's data.
 */
export async function listRegions(ctx: Pick<ApiContext, 'sql'>): Promise<RegionView[]> {
  return (await loadRegions(ctx.sql)).map((r) => ({
    region: r.region,
    state: r.state,
    reason: r.reason,
    since: formatTimestamp(new Date(r.since).toISOString()),
    agents: r.detail.agents ?? 0,
    canary_agents: r.detail.canary_agents ?? 0,
    canary_agents_failing: r.detail.canary_agents_failing ?? 0,
    compared: r.detail.compared ?? 0,
    disagreeing: r.detail.disagreeing ?? 0,
    updated_at: formatTimestamp(new Date(r.updated_at).toISOString()),
  }));
}
