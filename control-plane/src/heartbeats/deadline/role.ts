import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { JsMsg } from '@nats-io/jetstream';
import type { Ping } from '../../../../shared/src/contracts/pings.ts';
import type { Logger } from '../../../../shared/src/logger.ts';
import type { Metrics } from '../../../../shared/src/metrics.ts';
import type { NatsConnection } from '../../../../shared/src/nats.ts';
import { boundedMemo } from '../../../../shared/src/memo.ts';
import { pingPartition } from '../../../../shared/src/pings/partition.ts';
import { bucketOptions, openBucket } from '../../../../shared/src/provision.ts';
import type { Names } from '../../../../shared/src/subjects.ts';
import type { Sql } from '../../platform/db/sql.ts';
import type { OutboxPublisher } from '../../platform/outbox.ts';
import { deadlineInputsOf } from '../record.ts';
import { deadlineOf } from '../state.ts';
import { createActors } from './actors.ts';
import { systemClock, type Clock } from '../../platform/clock.ts';
import { consumePartition, MAX_ACK_PENDING, type PartitionConsumer } from './consumer.ts';
import { newCounters } from '../../platform/nats/consumer.ts';
import { createDeliveries } from './deliveries.ts';
import { leaseTiming } from './lease-plan.ts';
import { startLeases, type Leases } from './leases.ts';
import { createHeartbeatsProjection, pagedKeys } from './projection.ts';
import { heartbeatsNow, loadPartitions } from './repo.ts';
import { createPartitionClock, type PartitionClock } from './partition-clock.ts';
import { createRunner, type Delivery } from './runner.ts';
import { createDeadlineTimers, type DeadlineTimers } from './timers.ts';

export const DEADLINE_ROLE = 'deadline';
const RETRY_MS = 2_000;
/**
 * A partition's consumer state is asked for at most this often while deadlines come due (each
 * answer lets every deadline up to the instant it was asked at be judged), and again after this
 * long when it went unanswered.
 */
const CHECK_SPACING_MS = 50;
const CHECK_RETRY_MS = 1_000;
const RELOAD_MS = 10_000;

export interface DeadlineOptions {
  sql: Sql;
  nc: NatsConnection;
  names: Names;
  log: Logger;
  outbox: Pick<OutboxPublisher, 'publish'>;
  /** PING_PARTITIONS. */
  partitions: number;
  replicas: number;
  /**
   * The heartbeat rules' clock and the deadline heap's timer. Tests pass one they advance;
   * leases always run on real time, as the server's TTL does.
   */
  clock?: Clock;
  /** Steps per transaction at most (default 500). */
  batchSize?: number;
  /** Pings per transaction at most (default 5,000); one step takes all of its heartbeat's queued pings up to this. */
  pingsPerBatch?: number;
  /** Transactions at once at most (default 2). */
  concurrency?: number;
  /** The process's metrics: armed deadlines per partition, actors, lateness. */
  metrics?: Metrics;
}

export interface DeadlineStats {
  owned: number[];
  /** Partitions being taken: their consumers starting, their heartbeats loading and their deadlines armed. */
  loading: number;
  /** KV keys of loaded partitions being reconciled, after their load. */
  reconciling: boolean;
  /** Partitions whose pings have all reached this process; the others replay a backlog. */
  caughtUp: number[];
  armed: number;
  actors: number;
  queuedPings: number;
  batches: number;
  steps: number;
  pings: number;
  duplicates: number;
  /** Pings that came after later pings of their heartbeat (merged into its history). */
  latePings: number;
  events: number;
  invalid: number;
  failures: number;
}

export interface Deadline {
  stats(): DeadlineStats;
  stop(): Promise<void>;
}

/** A partition this process holds: its clock (partition-clock.ts), its deadlines and its consumer. */
interface HeldPartition {
  clock: PartitionClock;
  timers: DeadlineTimers;
  consumer?: PartitionConsumer;
  checking: boolean;
  /** Deadlines came due while the consumer's state was being asked for: ask again once answered. */
  checkAgain: boolean;
  /** When the consumer's state was last asked for (performance.now()). */
  checkedAt: number;
  /** A ping with others behind it was delivered since the consumer's state was last asked for. */
  backlogSeen: boolean;
}

/**
 * The deadline role (docs/adr/0008-deadline-actors.md): holds a fair share of the PINGS
 * partitions through leases; for each, consumes its pings, keeps every active heartbeat's
 * deadline in a timer heap on the partition's clock, runs one actor per heartbeat over the rules
 * (state.ts), and keeps the partition's keys of KV `heartbeats`. API changes arrive by
 * LISTEN/NOTIFY. A partition whose pings have not all reached this process (a backlog after an
 * outage, a takeover, a flood) judges its deadlines by the newest ping delivered, not by the
 * clock (ADR 0021); one that has judges them up to the last instant its consumer confirmed it
 * (ADR 0046), so a ping the server is slow to deliver still answers its deadline.
 */
export async function startDeadline(opts: DeadlineOptions): Promise<Deadline> {
  const log = opts.log.child({ component: 'deadline' });
  const clock = opts.clock ?? systemClock;
  // A step asks its heartbeat's partition for its clock and again for its deadline, and md5 costs
  // about 2 µs: the partitions of the heartbeats being worked on are kept (at most 16,384).
  const partitionOf = boundedMemo((id: string) => pingPartition(id, opts.partitions), 16_384);
  const buckets = { replicas: opts.replicas };
  // The listing runs in the background after loads (reconcileKeys): it rests as long as it works.
  const projection = createHeartbeatsProjection(await openBucket(opts.nc, opts.names, 'heartbeats', buckets), () =>
    pagedKeys(opts.nc, opts.names.buckets.heartbeats, 5_000, 1),
  );
  const leasesKv = await openBucket(opts.nc, opts.names, 'leases', buckets);

  const owned = new Set<number>();
  const held = new Map<number, HeldPartition>();
  // Set once the first lease round has run (partitions taken in it are fresh).
  let leases: Leases | undefined;
  const holds = (p: number) => owned.has(p) && (leases?.holds(p) ?? true);
  // Alone, the process holds every partition: no md5 per deadline and per step.
  const owns = (id: string) => (owned.size === opts.partitions && (leases?.holdsAll() ?? true)) || holds(partitionOf(id));
  const deliveries = createDeliveries();
  const retries = new Set<NodeJS.Timeout>();
  // Invalid pings, over every partition held since the start.
  const counters = newCounters();

  const hold = (partition: number): HeldPartition => {
    const pclock = createPartitionClock(clock, { confirm: () => void checkCaughtUp(partition) });
    const timers = createDeadlineTimers({
      clock: pclock,
      onDue: (ids) => {
        for (const id of ids) if (owns(id)) actors.tick(id);
      },
      ...(opts.metrics ? { onLateness: (ms: number) => opts.metrics!.deadlineLateness.observe(Math.max(0, ms) / 1000) } : {}),
    });
    return { clock: pclock, timers, checking: false, checkAgain: false, checkedAt: -Infinity, backlogSeen: false };
  };

  /**
   * Asks the consumer whether every ping of the partition has reached this process. The answer
   * holds for the instant it was asked at: deadlines up to it may be judged (partition-clock.ts,
   * ADR 0046). One question at a time per partition, at most one every CHECK_SPACING_MS: the
   * deadlines that come due meanwhile wait for the next. Unanswered (NATS away), it is asked
   * again after CHECK_RETRY_MS, and the deadlines that came due wait.
   */
  const checkCaughtUp = async (partition: number): Promise<void> => {
    const h = held.get(partition);
    if (!h?.consumer) return;
    if (h.checking) {
      h.checkAgain = true;
      return;
    }
    h.checking = true;
    try {
      do {
        h.checkAgain = false;
        const wait = h.checkedAt + CHECK_SPACING_MS - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        if (held.get(partition) !== h || stopping) return;
        h.backlogSeen = false;
        h.checkedAt = performance.now();
        const askedAt = clock.now();
        let s: { pending: number; ackPending: number };
        try {
          s = await h.consumer.state();
        } catch (err) {
          log.debug({ err, partition }, 'consumer state not read; asked again shortly');
          const timer = setTimeout(() => {
            retries.delete(timer);
            void checkCaughtUp(partition);
          }, CHECK_RETRY_MS);
          retries.add(timer);
          return;
        }
        // Deliveries the server waits on beyond those held here went to a previous holder: they
        // come again after their ack wait, with instants before what was delivered since.
        const caughtUp = s.pending === 0 && s.ackPending <= deliveries.heldIn(partition);
        if (held.get(partition) === h && !(caughtUp && h.backlogSeen)) h.clock.setCaughtUp(caughtUp, askedAt);
      } while (h.checkAgain);
    } finally {
      h.checking = false;
    }
  };

  const arm = (id: string, at: number | null) => held.get(partitionOf(id))?.timers.set(id, at);
  const judgedUntil = (id: string) => held.get(partitionOf(id))?.clock.now() ?? clock.now();

  const retry = (id: string, changed: boolean) => {
    const timer = setTimeout(() => {
      retries.delete(timer);
      if (!owns(id)) return;
      if (changed) actors.changed(id);
      else actors.tick(id);
    }, RETRY_MS);
    retries.add(timer);
  };

  const runner = createRunner({
    sql: opts.sql,
    log,
    outbox: opts.outbox,
    projection,
    arm,
    judgedUntil,
    deliveries,
    owns,
    retry,
    requeue: (id, pings) => actors.park(id, pings),
  });
  const pingsPerBatch = opts.pingsPerBatch ?? 5_000;
  const actors = createActors<Delivery>({
    run: runner.run,
    batchSize: opts.batchSize ?? 500,
    pingsPerStep: Math.min(MAX_ACK_PENDING, pingsPerBatch),
    pingsPerBatch,
    concurrency: opts.concurrency ?? 2,
    onError: (err) => log.error({ err }, 'deadline batch crashed'),
  });

  /** Every delivery of a partition, valid or not: what it says of the backlog, and whether the ping is held already. */
  const observe = (partition: number, msg: JsMsg) => {
    const h = held.get(partition);
    if (h) {
      if (msg.info.pending > 0) h.backlogSeen = true;
      h.clock.delivered(msg.time.getTime(), msg.info.pending);
    }
    if (!deliveries.hold(msg, partition)) return false;
    // At the cap the server delivers nothing more until pings are answered: what waits is unknown.
    if (h && deliveries.heldIn(partition) >= MAX_ACK_PENDING) h.clock.setCaughtUp(false, clock.now());
    return true;
  };

  const receive = (partition: number, msg: JsMsg, ping: Ping) => {
    if (!holds(partition)) {
      deliveries.settle(msg.seq, (m) => m.nak());
      return;
    }
    actors.ping(ping.heartbeat_id, { seq: msg.seq, ping, at: msg.time });
  };

  /** Arms the partitions' deadlines, then has their KV keys reconciled. `force` after a lost database connection, when notifications may have been missed. */
  const load = async (ps: readonly number[], force: boolean, still: (p: number) => boolean = () => true) => {
    if (ps.length === 0) return;
    const t0 = performance.now();
    // The heartbeats' project ids, for the KV keys: one string per project, not one per row.
    const projects = new Map<string, string>();
    const wanted = new Map<string, string>();
    let rows = 0;
    let armed = 0;
    // A quarter of all partitions a query at most (a whole load is at most four queries, each a
    // table scan where no index serves the partition count), lowest first: partitions given
    // back while this runs (the highest go first) are then not read at all, and a query whose
    // partitions all went stops reading.
    const perQuery = Math.ceil(opts.partitions / 4);
    const order = [...ps].sort((a, b) => a - b);
    for (let i = 0; i < order.length; i += perQuery) {
      const group = order.slice(i, i + perQuery).filter(still);
      if (group.length === 0) continue;
      for await (const chunk of loadPartitions(opts.sql, opts.partitions, group)) {
        if (!group.some(still)) break;
        for (const r of chunk) {
          rows++;
          if (!still(r.partition)) continue;
          let project = projects.get(r.project_id);
          if (project === undefined) projects.set(r.project_id, (project = r.project_id));
          wanted.set(r.id, project);
          // Armed whether or not the lease is confirmed at this instant (it may be being renewed
          // on a busy server): a deadline is judged only by a holder (onDue), and a partition
          // given up takes its timers with it.
          const timers = held.get(r.partition)?.timers;
          if (!timers) continue;
          const due = r.active ? (deadlineOf(deadlineInputsOf(r))?.getTime() ?? null) : null;
          if (due !== null) armed++;
          // A step that ran since the take read the row later than this load may have: it wins.
          if (force) timers.set(r.id, due);
          else timers.setIfAbsent(r.id, due);
        }
      }
    }
    const armedMs = performance.now() - t0;
    log.info(
      { partitions: ps, heartbeats: rows, armed, armedMs: Math.round(armedMs), ms: Math.round(performance.now() - t0) },
      'partitions loaded',
    );
    reconcileKeys(wanted, ps);
  };

  /**
   * The KV keys of loaded partitions, made exactly their heartbeats' (the projection ping edges
   * read), once their deadlines are armed and apart from it: listing a million keys takes seconds
   * on a busy server, and nothing about the deadlines waits for it (the keys persist across
   * restarts; this repairs drift). Loads that come while one runs are reconciled together by the
   * next single listing, not one listing each.
   */
  let kvNext: { wanted: Map<string, string>; scope: Set<number> } | undefined;
  let kvRunning: Promise<void> | undefined;
  let stopping = false;
  const reconcileKeys = (wanted: Map<string, string>, ps: readonly number[]) => {
    kvNext ??= { wanted: new Map(), scope: new Set() };
    for (const [id, project] of wanted) kvNext.wanted.set(id, project);
    for (const p of ps) kvNext.scope.add(p);
    wanted.clear();
    kvRunning ??= (async () => {
      while (kvNext && !stopping) {
        const job = kvNext;
        kvNext = undefined;
        await reconcileOnce(job.wanted, job.scope);
      }
      kvRunning = undefined;
    })();
  };
  const reconcileOnce = async (wanted: Map<string, string>, scope: Set<number>) => {
    const t0 = performance.now();
    // Every partition held takes the whole key listing's time: no hashing when this is all of them.
    const all = scope.size === opts.partitions;
    const ps = [...scope].sort((a, b) => a - b);
    try {
      const kv = await projection.reconcile(
        wanted,
        (id) => {
          if (all && held.size === opts.partitions) return true;
          // Every key of the bucket passes here once: not kept, they would only push out the ids being worked on.
          const p = pingPartition(id, opts.partitions);
          return scope.has(p) && held.has(p);
        },
        (ids) => heartbeatsNow(opts.sql, ids),
        () => stopping,
      );
      log.info(
        { partitions: ps, kvPuts: kv.puts, kvDeletes: kv.deletes, ms: Math.round(performance.now() - t0) },
        'KV keys of the partitions reconciled',
      );
    } catch (err) {
      if (stopping) return;
      // The deadlines are armed, so the partitions stay; their keys are made right by loading
      // them again a little later (a busy NATS server may take long to list a million keys).
      log.warn({ err, partitions: ps }, 'KV keys of the partitions not reconciled; loading them again shortly');
      const timer = setTimeout(() => {
        retries.delete(timer);
        const again = ps.filter((p) => held.has(p));
        void load(again, false).catch((e: unknown) => log.error({ err: e, partitions: again }, 'loading partitions again failed'));
      }, RELOAD_MS);
      retries.add(timer);
    }
  };

  const drop = async (ps: number[]) => {
    const scope = new Set(ps);
    for (const p of ps) owned.delete(p);
    const inScope = (id: string) => scope.has(partitionOf(id));
    const { pings, settled } = actors.drop(inScope);
    for (const d of pings) deliveries.settle(d.seq, (m) => m.nak());
    const dropped = ps.flatMap((p) => {
      const h = held.get(p);
      held.delete(p);
      h?.timers.stop();
      return h ? [h] : [];
    });
    await Promise.all(dropped.map((h) => h.consumer?.stop()));
    await settled;
  };

  let loading = 0;
  const take = async (ps: number[]) => {
    loading += ps.length;
    try {
      await takeAll(ps);
    } finally {
      loading -= ps.length;
    }
  };
  const takeAll = async (ps: number[]) => {
    // Leases are renewed while a take runs, so one may be lost meanwhile (and its partition
    // dropped, or even taken again): what this take set up is its own only while it is held.
    const mine = new Map<number, HeldPartition>();
    for (const p of ps) {
      owned.add(p);
      const h = hold(p);
      held.set(p, h);
      mine.set(p, h);
    }
    const still = (p: number) => held.get(p) === mine.get(p);
    try {
      for (const p of ps) {
        if (!still(p)) continue;
        const consumer = await consumePartition({
          nc: opts.nc,
          names: opts.names,
          partition: p,
          log,
          onDelivered: (m) => observe(p, m),
          onPing: (m, ping) => receive(p, m, ping),
          terminate: (m) => deliveries.settle(m.seq, (d) => d.term()),
          counters,
          onPulled: (delivered, pendingAfter) => {
            const h = held.get(p);
            if (h && !h.clock.backlog.caughtUp && (delivered === 0 || pendingAfter === 0)) void checkCaughtUp(p);
          },
        });
        if (!still(p)) {
          await consumer.stop();
          continue;
        }
        mine.get(p)!.consumer = consumer;
        await checkCaughtUp(p);
      }
      await load(ps.filter(still), false, still);
    } catch (err) {
      await drop(ps.filter(still));
      throw err;
    }
  };

  let listening = false;
  const listener = await opts.sql.listen(
    'heartbeat_changes',
    (id) => {
      if (owns(id)) actors.changed(id);
    },
    () => {
      if (!listening) {
        listening = true;
        return;
      }
      void load([...owned], true).catch((err: unknown) => log.error({ err }, 'reloading partitions failed'));
    },
  );

  const holder = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  leases = await startLeases({
    kv: leasesKv,
    names: opts.names,
    role: DEADLINE_ROLE,
    partitions: opts.partitions,
    holder,
    timing: leaseTiming(bucketOptions(buckets).leases.ttl ?? 10_000),
    log: log.child({ holder }),
    onAcquire: take,
    onRelease: drop,
  });
  log.info({ holder, owned: leases.owned() }, 'deadline role started');
  const armedByPartition = () => new Map([...held].map(([p, h]) => [p, h.timers.size]));
  const caughtUp = () =>
    [...held]
      .filter(([, h]) => h.clock.backlog.caughtUp)
      .map(([p]) => p)
      .sort((a, b) => a - b);
  if (opts.metrics)
    registerMetrics(opts.metrics, { owned: () => leases.owned(), armed: armedByPartition, caughtUp, actors: () => actors.stats() });

  return {
    stats: () => {
      let armed = 0;
      for (const h of held.values()) armed += h.timers.size;
      return {
        owned: leases.owned(),
        loading,
        reconciling: kvRunning !== undefined,
        caughtUp: caughtUp(),
        armed,
        ...actors.stats(),
        ...runner.stats(),
        invalid: counters.invalid,
      };
    },
    async stop() {
      stopping = true;
      await leases.stop();
      await listener.unlisten();
      for (const t of retries) clearTimeout(t);
      for (const h of held.values()) h.timers.stop();
      await actors.idle();
      await runner.drained();
      await kvRunning;
      log.info('deadline role stopped');
    },
  };
}

function registerMetrics(
  metrics: Metrics,
  role: {
    owned(): number[];
    armed(): ReadonlyMap<number, number>;
    caughtUp(): number[];
    actors(): { actors: number; queuedPings: number };
  },
): void {
  metrics.gauge('uptime_deadline_partitions_owned', 'PINGS partitions whose lease this process holds.', () => role.owned().length);
  metrics.gauge(
    'uptime_deadline_partitions_replaying',
    'Held PINGS partitions whose pings have not all reached this process (a backlog being replayed): their deadlines wait for the replay.',
    () => role.owned().length - role.caughtUp().length,
  );
  metrics.labeledGauge(
    'uptime_deadline_heartbeats_armed',
    'Heartbeats with an armed deadline, by partition this process holds.',
    ['partition'],
    () => {
      const armed = role.armed();
      return role.owned().map((partition) => ({ labels: { partition }, value: armed.get(partition) ?? 0 }));
    },
  );
  metrics.gauge('uptime_deadline_actors', 'Heartbeat actors with work queued or a step running.', () => role.actors().actors);
  metrics.gauge('uptime_deadline_pings_queued', "Pings waiting for their heartbeat's actor.", () => role.actors().queuedPings);
}
