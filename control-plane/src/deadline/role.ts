import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { JsMsg } from '@nats-io/jetstream';
import { Ping } from '../../../shared/src/contracts/pings.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import type { Metrics } from '../../../shared/src/metrics.ts';
import type { NatsConnection } from '../../../shared/src/nats.ts';
import { pingPartition } from '../../../shared/src/pings/partition.ts';
import { bucketOptions, openBucket } from '../../../shared/src/provision.ts';
import type { Names } from '../../../shared/src/subjects.ts';
import type { Sql } from '../db/sql.ts';
import type { OutboxPublisher } from '../events/outbox.ts';
import { stateOf } from '../heartbeats/record.ts';
import { deadlineOf } from '../heartbeats/state.ts';
import { createActors } from './actors.ts';
import { systemClock, type Clock } from './clock.ts';
import { consumePartition, type PartitionConsumer } from './consumer.ts';
import { createDeliveries } from './deliveries.ts';
import { leaseTiming } from './lease-plan.ts';
import { startLeases, type Leases } from './leases.ts';
import { createHeartbeatsProjection } from './projection.ts';
import { loadPartitions } from './repo.ts';
import { createRunner, type Delivery } from './runner.ts';
import { createDeadlineTimers } from './timers.ts';

export const DEADLINE_ROLE = 'deadline';
const RETRY_MS = 2_000;

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
  /** Transactions at once at most (default 2). */
  concurrency?: number;
  /** The process's metrics: armed deadlines per partition, actors, lateness. */
  metrics?: Metrics;
}

export interface DeadlineStats {
  owned: number[];
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

/**
 * The deadline role (docs/adr/0008-deadline-actors.md): holds a fair share of the PINGS
 * partitions through leases; for each, consumes its pings, keeps every active heartbeat's
 * deadline in one timer heap, runs one actor per heartbeat over the rules (state.ts), and keeps
 * the partition's keys of KV `heartbeats`. API changes arrive by LISTEN/NOTIFY.
 */
export async function startDeadline(opts: DeadlineOptions): Promise<Deadline> {
  const log = opts.log.child({ component: 'deadline' });
  const clock = opts.clock ?? systemClock;
  const partitionOf = (id: string) => pingPartition(id, opts.partitions);
  const buckets = { replicas: opts.replicas };
  const projection = createHeartbeatsProjection(await openBucket(opts.nc, opts.names, 'heartbeats', buckets));
  const leasesKv = await openBucket(opts.nc, opts.names, 'leases', buckets);

  const owned = new Set<number>();
  // Set once the first lease round has run (partitions taken in it are fresh).
  let leases: Leases | undefined;
  const holds = (p: number) => owned.has(p) && (leases?.holds(p) ?? true);
  // Alone, the process holds every partition: no md5 per deadline and per step.
  const owns = (id: string) => (owned.size === opts.partitions && (leases?.holdsAll() ?? true)) || holds(partitionOf(id));
  const consumers = new Map<number, PartitionConsumer>();
  const deliveries = createDeliveries();
  const retries = new Set<NodeJS.Timeout>();
  let invalid = 0;

  const timers = createDeadlineTimers({
    clock,
    onDue: (ids) => {
      for (const id of ids) if (owns(id)) actors.tick(id);
    },
    ...(opts.metrics ? { onLateness: (ms: number) => opts.metrics!.deadlineLateness.observe(Math.max(0, ms) / 1000), groupOf: partitionOf } : {}),
  });

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
    clock,
    log,
    outbox: opts.outbox,
    projection,
    timers,
    deliveries,
    owns,
    retry,
    requeue: (id, ping) => actors.park(id, ping),
  });
  const actors = createActors<Delivery>({
    run: runner.run,
    batchSize: opts.batchSize ?? 500,
    concurrency: opts.concurrency ?? 2,
    onError: (err) => log.error({ err }, 'deadline batch crashed'),
  });

  const receive = (partition: number, msg: JsMsg) => {
    if (!deliveries.hold(msg)) return;
    let parsed: ReturnType<typeof Ping.safeParse> | undefined;
    try {
      parsed = Ping.safeParse(msg.json());
    } catch {
      parsed = undefined;
    }
    if (!parsed?.success) {
      invalid++;
      log.warn({ subject: msg.subject, seq: msg.seq, issues: parsed?.error?.issues.slice(0, 3) }, 'invalid ping terminated');
      deliveries.settle(msg.seq, (m) => m.term());
      return;
    }
    if (!holds(partition)) {
      deliveries.settle(msg.seq, (m) => m.nak());
      return;
    }
    actors.ping(parsed.data.heartbeat_id, { seq: msg.seq, ping: parsed.data, at: msg.time });
  };

  /** Arms the partitions' deadlines and reconciles their KV keys. `force` after a lost database connection, when notifications may have been missed. */
  const load = async (ps: readonly number[], force: boolean) => {
    if (ps.length === 0) return;
    const scope = new Set(ps);
    const rows = await loadPartitions(opts.sql, opts.partitions, ps);
    let armed = 0;
    for (const r of rows) {
      if (!owns(r.id)) continue;
      const due = r.active ? (deadlineOf(stateOf(r))?.getTime() ?? null) : null;
      if (due !== null) armed++;
      // A step that ran since the take read the row later than this load may have: it wins.
      if (force) timers.set(r.id, due);
      else timers.setIfAbsent(r.id, due);
    }
    const kv = await projection.reconcile(rows, (id) => scope.has(partitionOf(id)));
    log.info({ partitions: ps, heartbeats: rows.length, armed, kvPuts: kv.puts, kvDeletes: kv.deletes }, 'partitions loaded');
  };

  const drop = async (ps: number[]) => {
    const scope = new Set(ps);
    for (const p of ps) owned.delete(p);
    const inScope = (id: string) => scope.has(partitionOf(id));
    const { pings, settled } = actors.drop(inScope);
    for (const d of pings) deliveries.settle(d.seq, (m) => m.nak());
    timers.clearWhere(inScope);
    await Promise.all(ps.map((p) => consumers.get(p)?.stop()));
    for (const p of ps) consumers.delete(p);
    await settled;
  };

  const take = async (ps: number[]) => {
    for (const p of ps) owned.add(p);
    try {
      for (const p of ps) {
        consumers.set(p, await consumePartition({ nc: opts.nc, names: opts.names, partition: p, log, onMessage: (m) => receive(p, m) }));
      }
      await load(ps, false);
    } catch (err) {
      await drop(ps);
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
  if (opts.metrics) registerMetrics(opts.metrics, { owned: () => leases.owned(), armed: () => timers.countsByGroup(), actors: () => actors.stats() });

  return {
    stats: () => ({ owned: leases.owned(), armed: timers.size, ...actors.stats(), ...runner.stats(), invalid }),
    async stop() {
      await leases.stop();
      await listener.unlisten();
      for (const t of retries) clearTimeout(t);
      timers.stop();
      await actors.idle();
      await runner.drained();
      log.info('deadline role stopped');
    },
  };
}

function registerMetrics(
  metrics: Metrics,
  role: { owned(): number[]; armed(): ReadonlyMap<number, number>; actors(): { actors: number; queuedPings: number } },
): void {
  metrics.gauge('uptime_deadline_partitions_owned', 'PINGS partitions whose lease this process holds.', () => role.owned().length);
  metrics.labeledGauge('uptime_deadline_heartbeats_armed', 'Heartbeats with an armed deadline, by partition this process holds.', ['partition'], () => {
    const armed = role.armed();
    return role.owned().map((partition) => ({ labels: { partition }, value: armed.get(partition) ?? 0 }));
  });
  metrics.gauge('uptime_deadline_actors', 'Heartbeat actors with work queued or a step running.', () => role.actors().actors);
  metrics.gauge('uptime_deadline_pings_queued', 'Pings waiting for their heartbeat\'s actor.', () => role.actors().queuedPings);
}
