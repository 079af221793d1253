/**
 * The rule that turns regional check results into a monitor status, as pure functions
 * (docs/adr/0028-verdicts-across-regions.md).
 *
 * Each region contributes its latest result (a failure is published only after the agent's
 * immediate re-check confirmed it). A region does not vote when its last result is older than
 * `staleAfterMs` (it lost its agents) or when the control plane judges it degraded (its agents
 * cannot reach their canaries, or it disagrees with the other regions about most monitors): it
 * abstains, so a broken probe neither holds a monitor down nor up.
 *
 * A round's verdict is "failing" when at least `quorum` voting regions fail: the monitor's quorum
 * (a majority, floor(n/2)+1, when it sets none), never more than the regions voting, so a monitor
 * whose other regions abstain is still judged by those left. A round is a slot of the monitor's
 * schedule (every region checks the same slots); its verdict may be revised while the regions'
 * results for it arrive. The status follows the verdict once it has held for `confirmDown`
 * consecutive rounds (to down) or `confirmUp` (back up); a pending monitor is up on its first
 * passing round.
 */
export type MonitorHealth = 0 | 1 | 2; // pending, up, down

export interface RegionVote {
  region: string;
  ok: boolean;
  scheduledAt: Date;
  error?: string | null;
  /** Evidence kept with an incident. */
  statusCode?: number | null;
  totalMs?: number | null;
  checkedAt?: Date | null;
  /** The region is degraded: its vote is set aside. */
  abstain?: boolean;
  /** Since when the region has failed without a pass (regional incidents); null or absent while it passes. */
  failingSince?: Date | null;
  /** The region's check passed but a `degraded` assertion failed (degraded.ts). */
  degraded?: boolean;
  /** Since when the region has been degraded without a break; null or absent while it is not. */
  degradedSince?: Date | null;
  /** The failing degraded assertion's message. */
  degradedReason?: string | null;
}

export interface VerdictPolicy {
  /** Failing regions needed for a failing round; null for a majority of the voting regions. */
  quorum: number | null;
  confirmDown: number;
  confirmUp: number;
}

export const defaultPolicy: VerdictPolicy = { quorum: null, confirmDown: 1, confirmUp: 1 };

/**
 * The rounds counted so far: `prior` is the signed run before the current round (negative:
 * failing rounds, positive: passing) and `priorSince` the slot it began at; `dir` is the current
 * round's verdict (-1, 1, 0 for none yet) and `round` its slot. Instants are epoch ms, 0 for none.
 */
export interface Streak {
  prior: number;
  priorSince: number;
  dir: -1 | 0 | 1;
  round: number;
}

export const noStreak: Streak = { prior: 0, priorSince: 0, dir: 0, round: 0 };

export interface Evaluation {
  status: MonitorHealth;
  transition: 'down' | 'up' | null;
  failing: string[];
  voting: string[];
  /** Regions with a fresh result whose vote was set aside (degraded). */
  abstained: string[];
  /** Failing regions a failing round needs (0 when no region votes). */
  required: number;
  /** The first failing region's error, as the incident's cause. */
  cause: string;
  streak: Streak;
}

/** A streak is kept within ±this: far beyond any confirmation. */
const STREAK_CAP = 100;

export function quorumOf(regions: number): number {
  return Math.floor(regions / 2) + 1;
}

/** Failing regions a round needs, given the monitor's quorum and the regions voting. */
export function requiredFailures(quorum: number | null, voting: number): number {
  if (voting === 0) return 0;
  return Math.min(quorum ?? quorumOf(voting), voting);
}

/** The signed run a streak stands for: the prior run extended (or replaced) by the current round. */
export function streakLength(s: Streak): number {
  if (s.dir === 0) return s.prior;
  if (Math.sign(s.prior) === s.dir) return Math.max(-STREAK_CAP, Math.min(STREAK_CAP, s.prior + s.dir));
  return s.dir;
}

/** The slot the run a streak stands for began at: where an incident starts or ends. */
export function streakSince(s: Streak): number {
  if (s.dir === 0 || Math.sign(s.prior) === s.dir) return s.priorSince;
  return s.round;
}

/** Counts a round's verdict: a newer round extends the run, the same round revises its own verdict, an older one changes nothing. */
export function nextStreak(s: Streak, dir: -1 | 1, round: number): Streak {
  if (round > s.round) return { prior: streakLength(s), priorSince: streakSince(s), dir, round };
  if (round === s.round) return { ...s, dir };
  return s;
}

/** The status a streak calls for, from the current one. */
export function statusFor(current: MonitorHealth, run: number, policy: VerdictPolicy): MonitorHealth {
  if (current !== 2 && run <= -policy.confirmDown) return 2;
  if (current === 2 && run >= policy.confirmUp) return 1;
  if (current === 0 && run > 0) return 1;
  return current;
}

export function evaluateMonitor(
  current: MonitorHealth,
  votes: readonly RegionVote[],
  now: Date,
  staleAfterMs: number,
  policy: VerdictPolicy = defaultPolicy,
  streak: Streak = noStreak,
): Evaluation {
  // One pass, no intermediate arrays: the ingest runs this for every monitor of every batch.
  const since = now.getTime() - staleAfterMs;
  const voting: string[] = [];
  const failing: string[] = [];
  const abstained: string[] = [];
  let cause = '';
  let round = 0;
  for (const v of votes) {
    const at = v.scheduledAt.getTime();
    if (at < since) continue;
    if (v.abstain) {
      abstained.push(v.region);
      continue;
    }
    voting.push(v.region);
    if (at > round) round = at;
    if (v.ok) continue;
    failing.push(v.region);
    if (!cause && v.error) cause = v.error;
  }
  if (voting.length > 1) voting.sort();
  if (failing.length > 1) failing.sort();
  if (abstained.length > 1) abstained.sort();
  const required = requiredFailures(policy.quorum, voting.length);
  const base = { failing, voting, abstained, required, cause };
  if (voting.length === 0) return { ...base, status: current, transition: null, streak };
  const next = nextStreak(streak, failing.length >= required ? -1 : 1, round);
  const status = statusFor(current, streakLength(next), policy);
  const transition = status === current ? null : status === 2 ? 'down' : current === 2 ? 'up' : null;
  return { ...base, status, transition, streak: next };
}

/** How long a region's last result keeps its vote: three intervals, and at least a minute. */
export function staleAfter(intervalSeconds: number): number {
  return Math.max(60_000, 3 * intervalSeconds * 1000 + 10_000);
}
