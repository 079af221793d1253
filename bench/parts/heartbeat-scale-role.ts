/**
 * A deadline process of the heartbeat-scale part: one deadline role (`startDeadline`) with its own
 * Postgres pool, NATS connection and outbox, as `uptime control-plane --roles deadline` holds it.
 * Weighs its heap and RSS before the role starts, then answers over IPC: `stats` (the role's
 * counters, its memory and CPU so far), `weigh` (heap after forced collections, RSS).
 * Needs --expose-gc. Argument: JSON RoleArgs.
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { connect } from '@nats-io/transport-node';
import { startDeadline, type DeadlineStats } from '../../control-plane/src/heartbeats/deadline/role.ts';
import { createSql } from '../../control-plane/src/platform/db/sql.ts';
import { createOutboxPublisher } from '../../control-plane/src/platform/outbox.ts';
import { natsNames } from '../../shared/src/subjects.ts';
import { answer } from '../lib/child.ts';
import { createLogger } from '../../shared/src/logger.ts';
import { benchLog } from '../lib/infra.ts';

export type RoleArgs = { databaseUrl: string; natsUrl: string; namespace: string; partitions: number; app: string };
export type Weight = { heap: number; rss: number; peakRss: number };
export type RoleReady = { pid: number; before: Weight; startedAt: number; startMs: number };
/** What the role logged of each load ("partitions loaded"): rows read and deadlines armed. */
export type Load = { partitions: number; heartbeats: number; armedMs: number; ms: number };
/** What it logged of each KV reconcile that follows loads (one listing of the keys for the loads since the last). */
export type Reconcile = { partitions: number; ms: number; kvPuts: number };
export type RoleStats = DeadlineStats & {
  loads: Load[];
  reconciles: Reconcile[];
  /** Times the role logged losing leases (not renewed in time, or a renewal that failed). */
  leaseLosses: number;
  cpuUs: number;
  rss: number;
  peakRss: number;
  heap: number;
  /** The longest the event loop was held up since the role started (ms): what lease renewals wait behind. */
  loopDelayMaxMs: number;
};
export type RoleMessage = { op: 'stats' } | { op: 'weigh' };

const args = JSON.parse(process.argv[2]!) as RoleArgs;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('heartbeat-scale-role needs --expose-gc');

const status = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) * 1024;
const weigh = async (): Promise<Weight> => {
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setImmediate(r));
    gc();
  }
  return { heap: process.memoryUsage().heapUsed, rss: status('VmRSS'), peakRss: status('VmHWM') };
};

// The role's log lines go to stderr at the bench's level; its loads are kept for the part.
const loads: Load[] = [];
const reconciles: Reconcile[] = [];
let leaseLosses = 0;
const log = createLogger({
  level: 'info',
  pretty: false,
  destination: {
    write(line: string) {
      const entry = JSON.parse(line) as { level: number; msg: string; partitions?: number[]; kvPuts: number } & Omit<Load, 'partitions'>;
      if (entry.msg === 'partitions loaded')
        loads.push({ partitions: entry.partitions!.length, heartbeats: entry.heartbeats, armedMs: entry.armedMs, ms: entry.ms });
      if (entry.msg === 'KV keys of the partitions reconciled')
        reconciles.push({ partitions: entry.partitions!.length, ms: entry.ms, kvPuts: entry.kvPuts });
      if (entry.msg === 'partition leases lost: stopped working on them') leaseLosses++;
      if (entry.level >= 40 || process.env.BENCH_LOG_LEVEL === 'info') process.stderr.write(line);
    },
  },
});

const sql = createSql(args.databaseUrl, { log: benchLog, max: 10, applicationName: args.app });
const nc = await connect({ servers: args.natsUrl, name: args.app });
const names = natsNames(args.namespace);
const outbox = createOutboxPublisher({ sql, nc, names, log: benchLog });
await sql`select 1`;
const before = await weigh();

const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
const startedAt = performance.timeOrigin + performance.now();
const t0 = performance.now();
const role = await startDeadline({ sql, nc, names, log, outbox, partitions: args.partitions, replicas: 1 });
const startMs = performance.now() - t0;

process.on('message', (m: RoleMessage) => {
  void (async () => {
    if (m.op === 'stats') {
      const u = process.cpuUsage();
      await answer({
        ...role.stats(),
        loads,
        reconciles,
        leaseLosses,
        cpuUs: u.user + u.system,
        rss: status('VmRSS'),
        peakRss: status('VmHWM'),
        heap: process.memoryUsage().heapUsed,
        loopDelayMaxMs: loopDelay.max / 1e6,
      } satisfies RoleStats);
    } else if (m.op === 'weigh') {
      await answer(await weigh());
    }
  })();
});

let stopping = false;
const shutdown = () => {
  if (stopping) return;
  stopping = true;
  void (async () => {
    await role.stop();
    outbox.stop();
    await sql.end({ timeout: 5 });
    await nc.close();
    process.exit(0);
  })();
};
process.on('SIGTERM', shutdown);
// The part ended without stopping this process (it crashed): no orphan is left holding leases.
process.on('disconnect', shutdown);

await answer({ pid: process.pid, before, startedAt, startMs } satisfies RoleReady);
