import { randomInt } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { KV } from '@nats-io/kv';
import type { LeaseHolder } from '../../../../shared/src/contracts/pings.ts';
import type { Logger } from '../../../../shared/src/logger.ts';
import type { Names } from '../../../../shared/src/subjects.ts';
import { parseLeaseKey, planLeases, renewDue, validUntil, type LeaseTiming } from './lease-plan.ts';

export interface LeaseOptions {
  kv: KV;
  names: Names;
  /** Key prefix: `<role>.<partition>`, members `<role>-members.<n>`. */
  role: string;
  partitions: number;
  /** Who this process is, written into its leases for operators. */
  holder: string;
  timing: LeaseTiming;
  log: Logger;
  /** This process now holds these partitions; it should start working on them. */
  onAcquire(partitions: number[]): Promise<void>;
  /** Stop working on these partitions: at once when a lease was lost, gracefully when given back. */
  onRelease(partitions: number[]): Promise<void>;
}

export interface Leases {
  owned(): number[];
  /**
   * Whether the lease of the partition is held and still valid by this process's clock. A process
   * that was paused past its leases' validity must not act on them before its next round drops
   * them: another process may hold them by now.
   */
  holds(partition: number): boolean;
  /** `holds` for every partition (a process alone holds them all): no partition to compute. */
  holdsAll(): boolean;
  stop(): Promise<void>;
}

interface Held {
  revision: number;
  writtenAt: number;
  validUntil: number;
}

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`lease request took over ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Holds this process's fair share of partitions (lease-plan.ts). Every `roundMs` it drops leases
 * it can no longer vouch for, renews the others and refreshes its membership (keepAlive); apart
 * from that, every round lists the bucket, then takes free partitions or gives back surplus ones
 * after the member count changed. Both run one at a time on real time, whatever clock the rules
 * use: the server's TTL runs on real time too. The first round has run when this resolves.
 */
export async function startLeases(opts: LeaseOptions): Promise<Leases> {
  const { kv, timing, log } = opts;
  const memberNo = randomInt(0, 2 ** 31 - 1);
  const memberKey = opts.names.keys.lease(`${opts.role}-members`, memberNo);
  const partitionKey = (p: number) => opts.names.keys.lease(opts.role, p);
  const value = JSON.stringify({ holder: opts.holder, since: new Date().toISOString() } satisfies LeaseHolder);
  const held = new Map<number, Held>();
  const resumable = new Map<number, number>();
  let memberWrittenAt = -Infinity;

  const lease = (revision: number, sentAt: number): Held => ({ revision, writtenAt: sentAt, validUntil: validUntil(sentAt, timing) });

  /** Stops work at once; the key may still be ours, so a later round may resume it. */
  const lose = async (lost: number[], why: string, err?: unknown) => {
    // A partition given back meanwhile (a round runs beside the renewals) is not lost.
    const ps = lost.filter((p) => held.has(p));
    if (ps.length === 0) return;
    for (const p of ps) {
      resumable.set(p, held.get(p)!.revision);
      held.delete(p);
    }
    log.warn({ partitions: ps, why, ...(err ? { err } : {}) }, 'partition leases lost: stopped working on them');
    await opts.onRelease(ps);
  };

  /** Hands partitions over: work stops first, then the key goes, so a successor starts clean. */
  const giveBack = async (ps: number[]) => {
    const revisions = ps.map((p) => [p, held.get(p)!.revision] as const);
    for (const p of ps) held.delete(p);
    await opts.onRelease(ps);
    await Promise.all(
      revisions.map(([p, revision]) =>
        within(kv.delete(partitionKey(p), { previousSeq: revision }), timing.requestTimeoutMs).catch((err: unknown) =>
          log.warn({ err, partition: p }, 'lease not deleted; it expires with the bucket TTL'),
        ),
      ),
    );
  };

  const renew = async () => {
    const now = performance.now();
    const overdue = [...held].filter(([, h]) => now >= h.validUntil).map(([p]) => p);
    if (overdue.length > 0) await lose(overdue, 'not renewed in time');
    const failed: number[] = [];
    let failure: unknown;
    await Promise.all(
      [...held]
        .filter(([, h]) => renewDue(h.writtenAt, performance.now(), timing))
        .map(async ([p, h]) => {
          const sentAt = performance.now();
          // A lease that lapsed while its renewal was on its way is not taken up again: while
          // it had lapsed the work on it stopped judging (deadlines that came due were let go),
          // so it is given up, to be taken anew (at the revision written), which loads the
          // partition again.
          const settle = (revision: number) => {
            // Given back (or lost and taken again) while the renewal was on its way: not ours to record.
            if (held.get(p) !== h) return;
            if (performance.now() < h.validUntil) held.set(p, lease(revision, sentAt));
            else {
              held.set(p, { ...h, revision });
              failed.push(p);
            }
          };
          try {
            settle(await kv.update(partitionKey(p), value, h.revision, timing.requestTimeoutMs));
          } catch (err) {
            // An answer that did not come in time (a busy server or connection) may hide a
            // write that was made: the key tells. Written after `sentAt`, its TTL cannot run
            // out before ours does. Not known either way, the lease is kept while still valid
            // (the overdue check above drops it) and renewed at the next round.
            const entry = await within(kv.get(partitionKey(p)), timing.requestTimeoutMs).catch(() => undefined);
            if (entry === undefined && performance.now() < h.validUntil) return;
            if (entry?.operation === 'PUT' && entry.string() === value) {
              settle(entry.revision);
              return;
            }
            if (held.get(p) !== h) return;
            failure = err;
            failed.push(p);
          }
        }),
    );
    if (failed.length > 0) await lose(failed, 'renewal failed', failure);
  };

  const heartbeat = async () => {
    if (!renewDue(memberWrittenAt, performance.now(), timing)) return;
    const sentAt = performance.now();
    await within(kv.put(memberKey, value), timing.requestTimeoutMs);
    memberWrittenAt = sentAt;
  };

  const listKeys = async () => {
    const taken = new Set<number>();
    const members = new Set<string>();
    for await (const key of await kv.keys()) {
      const parsed = parseLeaseKey(key, opts.role);
      if (parsed && 'partition' in parsed) taken.add(parsed.partition);
      else if (parsed) members.add(parsed.member);
    }
    members.add(String(memberNo));
    return { taken, members: members.size };
  };

  const acquire = async (ps: number[]) => {
    const got: number[] = [];
    await Promise.all(
      ps.map(async (p) => {
        const sentAt = performance.now();
        const previous = resumable.get(p);
        resumable.delete(p);
        try {
          const revision =
            previous === undefined
              ? await within(kv.create(partitionKey(p), value), timing.requestTimeoutMs)
              : await kv.update(partitionKey(p), value, previous, timing.requestTimeoutMs);
          held.set(p, lease(revision, sentAt));
          got.push(p);
        } catch {
          // Someone else holds it (or NATS did not answer): another round will tell.
        }
      }),
    );
    if (got.length === 0) return;
    got.sort((a, b) => a - b);
    // Starting work on many heartbeats (a million take some seconds to load) can outlast the
    // leases: the renewals go on meanwhile (keepAlive), and give back the surplus when members join.
    taking = true;
    try {
      await opts.onAcquire(got);
      log.info({ partitions: got, owned: held.size }, 'partitions taken');
    } catch (err) {
      log.error({ err, partitions: got }, 'could not start work on taken partitions; giving them back');
      taking = false;
      await renewing;
      await giveBack(got.filter((p) => held.has(p)));
    } finally {
      // The next round plans alone: a give-back started by a renewal finishes first.
      taking = false;
      await renewing;
    }
  };

  /** This round's plan, from the bucket's keys as they are now. */
  const plan = async () => {
    const { taken, members } = await listKeys();
    const planned = planLeases({
      partitions: opts.partitions,
      members,
      owned: new Set(held.keys()),
      taken,
      resumable: new Set(resumable.keys()),
      seed: memberNo % opts.partitions,
    });
    if (planned.release.length > 0) {
      log.info({ partitions: planned.release, members }, 'giving partitions back to share them');
      await giveBack(planned.release);
    }
    return planned.acquire;
  };
  /**
   * Renewals of the leases and of the membership, on a timer of their own, apart from the rounds
   * that list the bucket and take or give partitions. A listing creates a consumer, a request that
   * the server's JetStream API may hold up for seconds behind others (consumers over a million
   * KV keys being created): it must not hold the renewals back, which are plain writes. While a
   * take runs (rounds wait for it), members that came meanwhile get their share at once: the
   * surplus is given back while it loads, not after (processes started together first see only
   * themselves and take everything).
   */
  let taking = false;
  let renewing: Promise<void> | undefined;
  const keepAlive = async () => {
    await Promise.all([renew(), heartbeat()]);
    if (taking) await plan();
  };
  const tick = () =>
    (renewing ??= keepAlive()
      .catch((err: unknown) => log.warn({ err }, 'lease renewal failed'))
      .finally(() => (renewing = undefined)));

  const round = async () => {
    const wanted = await plan();
    if (wanted.length > 0) await acquire(wanted);
  };

  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  // Counted as a member before the first plan, so that processes starting together see each other.
  await tick();
  const ticker = setInterval(tick, timing.roundMs);
  const loop = () => {
    current = round()
      .catch((err: unknown) => log.warn({ err }, 'lease round failed'))
      .finally(() => {
        if (!stopping) timer = setTimeout(loop, timing.roundMs);
      });
  };
  loop();
  await current;

  return {
    owned: () => [...held.keys()].sort((a, b) => a - b),
    holds: (p) => {
      const h = held.get(p);
      return h !== undefined && performance.now() < h.validUntil;
    },
    holdsAll: () => {
      if (held.size < opts.partitions) return false;
      const now = performance.now();
      for (const h of held.values()) if (now >= h.validUntil) return false;
      return true;
    },
    async stop() {
      stopping = true;
      clearTimeout(timer);
      clearInterval(ticker);
      await current;
      await renewing;
      if (held.size > 0) await giveBack([...held.keys()]);
      await within(kv.delete(memberKey), timing.requestTimeoutMs).catch(() => {});
    },
  };
}
