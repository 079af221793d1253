/**
 * Whether a probe region can be trusted to vote, as a pure function
 * (docs/adr/0028-verdicts-across-regions.md). A degraded region abstains: its results are stored
 * and shown, but they neither put a monitor down nor bring it up.
 *
 * - silent: no agent of the region has been live for `silentAfterMs`.
 * - canaries: the region's agents check canaries (CANARY_URLS) and more than half of those
 *   reporting cannot reach most of theirs. Where canaries are configured they decide: a region
 *   whose canaries answer is not judged by disagreement, so an outage that only its users see
 *   still counts.
 * - disagreement (no canaries): at least `minDisagreeing` monitors, and more than half of those
 *   it shares with other regions, fail there while most other regions see them up.
 *
 * A degraded region recovers when the reason is gone: an agent is live, the canaries answer, and
 * disagreement has fallen to at most `recoverShare` of the shared monitors (hysteresis, so one
 * region does not flap between the two states).
 */

export type RegionState = 'healthy' | 'degraded';
export type DegradedReason = 'silent' | 'canaries' | 'disagreement';

export interface RegionObservation {
  /** Live agents of the region now. */
  agents: number;
  /** When an agent of the region was last live (epoch ms), null when never seen. */
  lastSeenAt: number | null;
  /** Live agents that check canaries, and how many of those cannot reach most of theirs. */
  canaryAgents: number;
  canaryAgentsFailing: number;
  /** Monitors with a fresh result here and in another region, and those failing here only. */
  compared: number;
  disagreeing: number;
}

export interface RegionRecord {
  state: RegionState;
  reason: DegradedReason | null;
  /** When the current state began, epoch ms. */
  since: number;
}

export interface HealthTuning {
  silentAfterMs: number;
  minDisagreeing: number;
  recoverShare: number;
}

export const defaultTuning: HealthTuning = { silentAfterMs: 30_000, minDisagreeing: 3, recoverShare: 0.2 };

export interface RegionJudgement {
  next: RegionRecord;
  /** The state changed: the change is an event. */
  change: 'degraded' | 'recovered' | null;
}

/** Why the region should be degraded now, or null; `degraded` says whether it already is (hysteresis). */
export function degradedReason(
  o: RegionObservation,
  now: number,
  degraded: boolean,
  t: HealthTuning = defaultTuning,
): DegradedReason | null {
  if (o.agents === 0 && (o.lastSeenAt === null || now - o.lastSeenAt >= t.silentAfterMs)) return 'silent';
  if (o.canaryAgents > 0) return o.canaryAgentsFailing * 2 > o.canaryAgents ? 'canaries' : null;
  if (degraded) return o.disagreeing > o.compared * t.recoverShare ? 'disagreement' : null;
  return o.disagreeing >= t.minDisagreeing && o.disagreeing * 2 > o.compared ? 'disagreement' : null;
}

export function judgeRegion(
  prev: RegionRecord | null,
  o: RegionObservation,
  now: number,
  t: HealthTuning = defaultTuning,
): RegionJudgement {
  const wasDegraded = prev?.state === 'degraded';
  const reason = degradedReason(o, now, wasDegraded, t);
  if (reason === null) {
    if (!prev) return { next: { state: 'healthy', reason: null, since: now }, change: null };
    if (!wasDegraded) return { next: prev, change: null };
    return { next: { state: 'healthy', reason: null, since: now }, change: 'recovered' };
  }
  if (wasDegraded) return { next: { ...prev!, reason }, change: null };
  return { next: { state: 'degraded', reason, since: now }, change: 'degraded' };
}
