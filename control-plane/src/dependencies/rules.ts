/** A monitor or heartbeat, as one end of a dependency. */
export interface SubjectRef {
  type: 'monitor' | 'heartbeat';
  id: string;
}

/** The most parents one monitor or heartbeat may have. */
export const MAX_PARENTS = 10;

/** The longest a child's down waits for a parent that may still be found down (5 minutes). */
export const MAX_SETTLE_MS = 300_000;

/**
 * How long a child's down waits for this parent to be judged: a monitor parent is checked every
 * `interval` and needs `confirmDown` failing rounds, plus a few seconds for its results to be
 * counted; capped at MAX_SETTLE_MS. A heartbeat's down cannot be foreseen: no wait.
 */
export function settleMs(parent: { type: 'monitor' | 'heartbeat'; intervalSeconds: number | null; confirmDown: number | null }): number {
  if (parent.type !== 'monitor' || parent.intervalSeconds === null) return 0;
  return Math.min(MAX_SETTLE_MS, (parent.intervalSeconds * Math.max(1, parent.confirmDown ?? 1) + 5) * 1000);
}

/**
 * The parent that would close a cycle if `child` depended on `parents`, given the project's
 * other edges (child id -> its parent ids); null when none would. A self-dependency is a cycle.
 */
export function cycleThrough(edges: ReadonlyMap<string, readonly string[]>, child: string, parents: readonly string[]): string | null {
  for (const parent of parents) {
    // Walks up from the parent: reaching the child means the child would be its own ancestor.
    const seen = new Set<string>();
    const stack = [parent];
    while (stack.length > 0) {
      const at = stack.pop()!;
      if (at === child) return parent;
      if (seen.has(at)) continue;
      seen.add(at);
      for (const up of edges.get(at) ?? []) stack.push(up);
    }
  }
  return null;
}

/** One parent of a child whose down is being decided, as its data says around the down. */
export interface ParentFacts {
  id: string;
  type: 'monitor' | 'heartbeat';
  /**
   * A monitor parent's incident overlapping [the child's down, the end of its wait]: still open,
   * or ended since. A heartbeat parent has none.
   */
  incident: { id: string; open: boolean } | null;
  /** A heartbeat parent is down now. */
  heartbeatDown: boolean;
}

/** What becomes of a child's down while its parents are considered. */
export type DependentDecision =
  /** A parent is down: the down waits with that parent's outage and joins its incident. */
  | { action: 'join'; parentId: string; incidentId: string | null }
  /** No parent is down yet, but a monitor parent may still be found down: look again at `until`. */
  | { action: 'wait'; until: number }
  /** No parent is (or is any longer) down and the child is still down: it alerts now. */
  | { action: 'send' }
  /** The parent's outage is over and the child recovered meanwhile: nothing is sent. */
  | { action: 'drop' };

export interface DependentFacts {
  /** When the child's down may stop waiting for a parent to be found down. */
  settleUntil: number;
  now: number;
  parents: readonly ParentFacts[];
  /** The outage the down already joined, if it did. */
  joined: { parentId: string; incidentId: string | null } | null;
  /** The child is still down (always true when its down is first routed). */
  childStillDown: boolean;
  /** When the joined parent's outage ended (its incident's end), if known. */
  recoveredAt?: number | null;
  /** How long a joined child is given to recover after its parent did (recoveryGraceMs). */
  childGraceMs?: number;
}

/**
 * How long a child that joined its parent's outage is given to come up after the parent did:
 * its own interval per confirming round, plus 5 s, capped. Children usually recover a moment
 * after their parent; only one still down after that alerts. A heartbeat child: no grace.
 */
export function recoveryGraceMs(child: {
  type: 'monitor' | 'heartbeat';
  intervalSeconds: number | null;
  confirmUp: number | null;
}): number {
  return settleMs({ type: child.type, intervalSeconds: child.intervalSeconds, confirmDown: child.confirmUp });
}

/**
 * The dependency rule (ADR 0030). A child's down is held while one of its parents is down, and
 * joins that parent's outage; when the parent recovers, a child still down alerts then, one that
 * recovered sends nothing. A down routed before its parent is found down waits for the parent to
 * be judged (`settleUntil`), so a parent and its children failing together send one alert
 * whichever is detected first; and a joined child still down when its parent recovers is given its
 * own grace to recover too before it alerts. Facts come from the data (incidents overlapping the down's own
 * time), so a late or repeated routing decides the same.
 */
export function decideDependent(f: DependentFacts): DependentDecision {
  const down = f.parents.find((p) => (p.type === 'monitor' ? p.incident?.open === true : p.heartbeatDown));
  if (down) return { action: 'join', parentId: down.id, incidentId: down.type === 'monitor' ? down.incident!.id : null };
  // A parent that was down around the child's down and is up again: its outage is over.
  const recovered = f.parents.some((p) => p.incident !== null && !p.incident.open);
  if (f.joined && f.childStillDown) {
    // The parent is up again: the child is given its own grace to follow it up.
    const until = (f.recoveredAt ?? f.now) + (f.childGraceMs ?? 0);
    if (f.now < until) return { action: 'wait', until };
  }
  if (f.joined || recovered || f.now >= f.settleUntil) return f.childStillDown ? { action: 'send' } : { action: 'drop' };
  return { action: 'wait', until: f.settleUntil };
}
