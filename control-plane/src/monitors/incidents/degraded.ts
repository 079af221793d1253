/**
 * The degraded state (ADR 0034), as pure functions: a monitor that is up, but whose checks pass
 * with a failing `degraded` assertion (slow but up) in enough regions, is degraded. It is recorded
 * as a degraded period apart from outages (not counted against uptime), shown as status 4, and
 * sent only to monitors that ask (`alert_degraded`).
 *
 * - Degraded when the monitor is up and its degraded regions, with its failing ones (fewer than
 *   the quorum, or it would be down), reach the quorum of the voting regions: not healthy where it
 *   counts, but not down. At least one region must be degraded.
 * - Confirmed like a down: a region counts once it has been degraded for `confirm_down` rounds
 *   (its first degraded round and confirm_down - 1 intervals after it). Until then nothing
 *   changes.
 * - It opens dated from when the first of those regions became degraded, widens as regions join,
 *   and closes on the first round that is not degraded, or when the monitor goes down (the outage
 *   is then its incident).
 */
import type { Evaluation, RegionVote } from '../status.ts';

export type DegradedChange =
  | { type: 'open'; started_at: string; regions: string[]; cause: string }
  | { type: 'widen'; regions: string[] }
  | { type: 'close'; ended_at: string };

/** The regions of the open degraded period, null when none is open. */
export type DegradedState = readonly string[] | null;

export interface DegradedPolicy {
  confirmDown: number;
  intervalMs: number;
}

/** The voting regions that are degraded and confirmed, in region order. */
function degradedVotes(e: Pick<Evaluation, 'voting'>, votes: readonly RegionVote[], policy: DegradedPolicy): RegionVote[] {
  const voting = new Set(e.voting);
  const need = (policy.confirmDown - 1) * policy.intervalMs;
  return votes
    .filter((v) => voting.has(v.region) && v.ok && v.degraded === true)
    .filter((v) => v.scheduledAt.getTime() - (v.degradedSince ?? v.scheduledAt).getTime() >= need)
    .sort((a, b) => (a.region < b.region ? -1 : a.region > b.region ? 1 : 0));
}

/**
 * Whether the latest round is degraded: true, false, or null while degraded regions are not
 * confirmed yet (the state is kept).
 */
export function isDegraded(
  e: Pick<Evaluation, 'status' | 'voting' | 'failing' | 'required'>,
  votes: readonly RegionVote[],
  policy: DegradedPolicy,
): boolean | null {
  if (e.status !== 1 || e.voting.length === 0) return false;
  const voting = new Set(e.voting);
  const anyDegraded = votes.filter((v) => voting.has(v.region) && v.ok && v.degraded === true).length;
  if (anyDegraded === 0 || anyDegraded + e.failing.length < e.required) return false;
  const confirmed = degradedVotes(e, votes, policy).length;
  return confirmed > 0 && confirmed + e.failing.length >= e.required ? true : null;
}

export function degradedChange(
  e: Evaluation,
  votes: readonly RegionVote[],
  open: DegradedState,
  policy: DegradedPolicy,
  now: Date,
): DegradedChange | null {
  const degraded = isDegraded(e, votes, policy);
  if (degraded === null) return null;
  if (degraded) {
    const regions = degradedVotes(e, votes, policy);
    const names = regions.map((v) => v.region);
    if (open === null) {
      const since = Math.min(...regions.map((v) => (v.degradedSince ?? v.scheduledAt).getTime()));
      return {
        type: 'open',
        started_at: new Date(since).toISOString(),
        regions: names,
        cause: regions.find((v) => v.degradedReason)?.degradedReason ?? '',
      };
    }
    const widened = [...new Set([...open, ...names])].sort();
    return widened.length > open.length ? { type: 'widen', regions: widened } : null;
  }
  if (open !== null && (e.voting.length > 0 || e.status === 2)) {
    return { type: 'close', ended_at: new Date(e.streak.round || now.getTime()).toISOString() };
  }
  return null;
}
