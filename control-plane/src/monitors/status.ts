/**
 * The rule that turns regional check results into a monitor status, as a pure function.
 *
 * Each region contributes its latest result (a failure is published only after the agent's
 * immediate re-check confirmed it). Regions that have not reported within `staleAfterMs` do not
 * vote, so a region that lost its agents neither holds a monitor down nor up. The monitor is down
 * when a quorum of the voting regions fail: a majority, floor(n/2)+1 (1 of 1, 2 of 2, 2 of 3),
 * and up again on the first evaluation where the failures fall below it.
 */
export type MonitorHealth = 0 | 1 | 2; // pending, up, down

export interface RegionVote {
  region: string;
  ok: boolean;
  scheduledAt: Date;
  error?: string | null;
}

export interface Evaluation {
  status: MonitorHealth;
  transition: 'down' | 'up' | null;
  failing: string[];
  voting: string[];
  /** The first failing region's error, as the incident's cause. */
  cause: string;
}

export function quorumOf(regions: number): number {
  return Math.floor(regions / 2) + 1;
}

export function evaluateMonitor(current: MonitorHealth, votes: readonly RegionVote[], now: Date, staleAfterMs: number): Evaluation {
  // One pass, no intermediate arrays: the ingest runs this for every monitor of every batch.
  const since = now.getTime() - staleAfterMs;
  const voting: string[] = [];
  const failing: string[] = [];
  let cause = '';
  for (const v of votes) {
    if (v.scheduledAt.getTime() < since) continue;
    voting.push(v.region);
    if (v.ok) continue;
    failing.push(v.region);
    if (!cause && v.error) cause = v.error;
  }
  if (voting.length > 1) voting.sort();
  if (failing.length > 1) failing.sort();
  const base = { failing, voting, cause };
  if (voting.length === 0) return { ...base, status: current, transition: null };
  const down = failing.length >= quorumOf(voting.length);
  if (down) return { ...base, status: 2, transition: current === 2 ? null : 'down' };
  return { ...base, status: 1, transition: current === 2 ? 'up' : null };
}

/** How long a region's last result keeps its vote: three intervals, and at least a minute. */
export function staleAfter(intervalSeconds: number): number {
  return Math.max(60_000, 3 * intervalSeconds * 1000 + 10_000);
}
