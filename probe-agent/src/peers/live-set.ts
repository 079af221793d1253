/**
 * The live agents of one region, as one agent sees them. nats-server 2.9 removes an expired KV
 * entry without telling watchers, so a peer also counts as dead once nothing was heard from it
 * for ttlMs (the bucket's max age). The agent itself is always live. The clock is a parameter.
 */
export type LiveSet = {
  /** A presence of agentId was heard at `at`; true when the agent joined the set. */
  seen(agentId: string, at: number): boolean;
  /** Its presence key was deleted or purged; true when it left the set. */
  left(agentId: string): boolean;
  /** Removes the peers silent for longer than ttlMs at `now`, and returns them. */
  expire(now: number): string[];
  /** Every peer counts as heard at `now`: silence while this agent was cut off proves nothing. */
  refreshAll(now: number): void;
  has(agentId: string): boolean;
  /** Sorted, this agent included. */
  members(): string[];
};

export function createLiveSet(opts: { self: string; ttlMs: number }): LiveSet {
  const lastSeen = new Map<string, number>();

  return {
    seen(agentId, at) {
      if (agentId === opts.self) return false;
      const before = lastSeen.get(agentId);
      lastSeen.set(agentId, Math.max(before ?? -Infinity, at));
      return before === undefined;
    },
    left(agentId) {
      if (agentId === opts.self) return false;
      return lastSeen.delete(agentId);
    },
    expire(now) {
      const gone: string[] = [];
      for (const [agentId, at] of lastSeen) {
        if (now - at > opts.ttlMs) gone.push(agentId);
      }
      for (const agentId of gone) lastSeen.delete(agentId);
      return gone;
    },
    refreshAll(now) {
      for (const agentId of lastSeen.keys()) lastSeen.set(agentId, Math.max(lastSeen.get(agentId)!, now));
    },
    has: (agentId) => agentId === opts.self || lastSeen.has(agentId),
    members: () => [opts.self, ...lastSeen.keys()].sort(),
  };
}
