/**
 * Regional incidents (ADR 0031), as pure functions: a monitor that fails in some of its voting
 * regions but fewer than its quorum is not down (it is up for its users elsewhere), but something
 * is wrong there: a regional incident records it, apart from the monitor's incidents (it does not
 * count against uptime), and is sent only to monitors that ask (`alert_regional`).
 *
 * - It opens when a round has failing regions below the quorum while the monitor is not down, and
 *   one of them has failed for at least REGIONAL_GRACE_MS (a probe region whose own network
 *   broke is judged degraded, and abstains, well within that time: its failures are then no
 *   one's incident). It is dated from when that region began failing.
 * - While open, regions that join are added to it.
 * - It closes when no voting region fails any more, or when the monitor goes down (the outage is
 *   then the monitor's incident), dated from the round that ended it.
 */
import type { Evaluation, RegionVote } from '../status.ts';

export type RegionalChange =
  | { type: 'open'; started_at: string; regions: string[]; cause: string }
  | { type: 'widen'; regions: string[] }
  | { type: 'close'; ended_at: string };

/** The monitor's regional state: the regions of its open regional incident, null when none is open. */
export type RegionalState = readonly string[] | null;

/** How long a region must have failed before its failure is a regional incident. */
export const REGIONAL_GRACE_MS = 30_000;

/**
 * Whether the latest round is regional: some voting regions fail, fewer than the quorum, the
 * monitor is not down, every passing region has reported on the failing slot or a later one (a
 * region that has not checked since is no evidence yet: the failure may be spreading, and the
 * monitor going down is then its incident, with no regional one before it), and one failing
 * region has failed for the grace. Null: not known yet (the state is kept).
 */
export function isRegional(
  e: Pick<Evaluation, 'status' | 'failing' | 'required' | 'voting'>,
  votes: readonly RegionVote[],
  now: Date,
): boolean | null {
  if (e.status === 2 || e.failing.length === 0 || e.voting.length < 2 || e.failing.length >= e.required) return false;
  const failing = new Set(e.failing);
  const voting = new Set(e.voting);
  let failingAt = 0;
  for (const v of votes) if (failing.has(v.region) && v.scheduledAt.getTime() > failingAt) failingAt = v.scheduledAt.getTime();
  for (const v of votes) if (voting.has(v.region) && !failing.has(v.region) && v.scheduledAt.getTime() < failingAt) return null;
  return firstFailure(e.failing, votes) <= now.getTime() - REGIONAL_GRACE_MS ? true : null;
}

/** When the earliest of these regions began failing (its latest check when that is not known). */
function firstFailure(regions: readonly string[], votes: readonly RegionVote[]): number {
  const failing = new Set(regions);
  let first = Infinity;
  for (const v of votes) {
    if (!failing.has(v.region)) continue;
    const since = (v.failingSince ?? v.scheduledAt).getTime();
    if (since < first) first = since;
  }
  return first;
}

export function regionalChange(e: Evaluation, votes: readonly RegionVote[], open: RegionalState, now: Date): RegionalChange | null {
  const regional = isRegional(e, votes, now);
  if (regional === null) return null;
  if (regional && open === null) {
    return { type: 'open', started_at: new Date(firstFailure(e.failing, votes)).toISOString(), regions: e.failing, cause: e.cause };
  }
  if (regional && open !== null) {
    const widened = [...new Set([...open, ...e.failing])].sort();
    return widened.length > open.length ? { type: 'widen', regions: widened } : null;
  }
  if (!regional && open !== null && e.voting.length > 0) {
    return { type: 'close', ended_at: new Date(e.streak.round || now.getTime()).toISOString() };
  }
  return null;
}
