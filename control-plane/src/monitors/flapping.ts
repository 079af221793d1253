/** A monitor's flapping policy: more than `threshold` changes within `windowMs` is flapping. */
export interface FlapPolicy {
  /** Null: flapping is not detected (every change is sent). */
  threshold: number | null;
  windowMs: number;
}

/** What the router does with one state change (down or up) of a monitor. */
export type FlapDecision =
  /** Not flapping: the change is sent as usual. */
  | { action: 'send' }
  /** This change makes it flap: one "flapping" message instead of the change. */
  | { action: 'start' }
  /** Already flapping: the change is recorded, not sent; the monitor settles a window after it. */
  | { action: 'suppress' };

/**
 * The flapping rule (ADR 0030). `changes` counts the monitor's state changes within the window
 * that ends at this change's own time, this one included (from its incidents' starts and ends,
 * never the wall clock, so a replay decides the same).
 */
export function decideFlap(f: { policy: FlapPolicy; flapping: boolean; changes: number }): FlapDecision {
  if (f.flapping) return { action: 'suppress' };
  if (f.policy.threshold === null) return { action: 'send' };
  return f.changes > f.policy.threshold ? { action: 'start' } : { action: 'send' };
}

/** A flapping monitor has settled when no change has come for a whole window after its last one. */
export function settled(f: { lastChangeAt: number; windowMs: number; now: number }): boolean {
  return f.now >= f.lastChangeAt + f.windowMs;
}
