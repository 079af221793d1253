/**
 * The rules of partition leases, as pure functions of what a process knows.
 *
 * A lease is a key in KV `leases` written with revision CAS (create, or update at the revision
 * this process last wrote) in a bucket whose TTL ends any key not rewritten in time. Only local
 * monotonic time is compared, never clocks of two hosts: a lease this process wrote at local
 * instant `sent` (when the request left) cannot expire on the server before `sent + ttl`, so
 * the process may act on it until `sent + ttl - margin` and not a moment longer.
 */
export interface LeaseTiming {
  /** The bucket's TTL. */
  ttlMs: number;
  /** Rewrite a held lease this long after the last write. */
  renewMs: number;
  /** Stop acting on a lease this long before the server could let it expire. */
  marginMs: number;
  /** How often a process renews, counts members and tries to take free partitions. */
  roundMs: number;
  /** A lease write that takes longer has failed. */
  requestTimeoutMs: number;
}

export function leaseTiming(ttlMs: number): LeaseTiming {
  return {
    ttlMs,
    renewMs: Math.round(ttlMs * 0.3),
    marginMs: Math.round(ttlMs * 0.2),
    roundMs: Math.min(1_000, Math.round(ttlMs * 0.1)),
    requestTimeoutMs: Math.round(ttlMs * 0.2),
  };
}

/** The last local instant at which a lease written at `sentAt` may still be acted on. */
export const validUntil = (sentAt: number, t: LeaseTiming): number => sentAt + t.ttlMs - t.marginMs;

export const renewDue = (writtenAt: number, now: number, t: LeaseTiming): boolean => now - writtenAt >= t.renewMs;

/** Partitions one member should hold: rounded up, so together the members cover them all. */
export const fairShare = (partitions: number, members: number): number => Math.ceil(partitions / Math.max(1, members));

export interface LeaseView {
  partitions: number;
  /** Live members, this process included. */
  members: number;
  /** Partitions this process holds. */
  owned: ReadonlySet<number>;
  /** Partitions whose lease key exists (anyone's, this process's included). */
  taken: ReadonlySet<number>;
  /** Partitions this process lost while their key may still carry its last write. */
  resumable: ReadonlySet<number>;
  /** Spreads where members start looking, so two newcomers rarely race for the same key. */
  seed: number;
}

/**
 * What to do this round: give back what exceeds the fair share (highest partitions first), or
 * try to take up to the fair share: first leases this process lost but may resume, then free
 * partitions starting from the seed.
 */
export function planLeases(v: LeaseView): { acquire: number[]; release: number[] } {
  const share = fairShare(v.partitions, v.members);
  if (v.owned.size > share) {
    const release = [...v.owned].sort((a, b) => b - a).slice(0, v.owned.size - share);
    return { acquire: [], release };
  }
  const want = share - v.owned.size;
  const acquire: number[] = [];
  for (const p of [...v.resumable].sort((a, b) => a - b)) {
    if (acquire.length < want && !v.owned.has(p)) acquire.push(p);
  }
  for (let i = 0; i < v.partitions && acquire.length < want; i++) {
    const p = (i + v.seed) % v.partitions;
    if (!v.owned.has(p) && !v.taken.has(p) && !acquire.includes(p)) acquire.push(p);
  }
  return { acquire, release: [] };
}

/** A key of the leases bucket: a partition lease `<role>.<p>`, a member `<role>-members.<n>`, or another role's. */
export function parseLeaseKey(key: string, role: string): { partition: number } | { member: string } | null {
  const dot = key.lastIndexOf('.');
  if (dot < 0) return null;
  const prefix = key.slice(0, dot);
  const rest = key.slice(dot + 1);
  if (prefix === role && /^\d+$/.test(rest)) return { partition: Number(rest) };
  if (prefix === `${role}-members`) return { member: rest };
  return null;
}
