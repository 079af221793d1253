/**
 * The longest a change stays owed a check at once: RESULTS' duplicate window, inside which a
 * check repeated by another agent or after a takeover is dropped by the stream.
 */
export const firstCheckWindowMs = 10 * 60_000;

export type FirstCheckInput = {
  /** `changed_at` of the assignment just put (ISO), if any. */
  changedAt: string | undefined;
  /** `changed_at` of the entry this agent held under the same key before, if any. */
  heldChangedAt: string | undefined;
  /** When this agent started: changes older than that are not its news. */
  since: number;
  now: number;
  intervalMs: number;
};

/**
 * When an assignment just put is owed one check at once (the time of its change, in ms), or
 * undefined. Pure: the agent's clock comes in as `now`. It is owed when:
 * - the change is news: its `changed_at` is not the one this agent already held (a rename or a
 *   new interval keeps it, so they check nothing early);
 * - it was made since the agent started: what changed before was checked by the agents of the
 *   time (or by this one before a restart), so a restart, a join or a replay checks nothing early;
 * - it is recent: younger than one interval, after which a slot has come by anyway, and than
 *   firstCheckWindowMs. Hosts' clocks may differ: a change "in the future" is recent.
 */
export function firstCheckAt(input: FirstCheckInput): number | undefined {
  const { changedAt, heldChangedAt, since, now, intervalMs } = input;
  if (changedAt === undefined || changedAt === heldChangedAt) return undefined;
  const at = Date.parse(changedAt);
  if (!Number.isFinite(at) || at < since) return undefined;
  return now - at < Math.min(intervalMs, firstCheckWindowMs) ? at : undefined;
}
