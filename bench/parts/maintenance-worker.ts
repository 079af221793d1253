/**
 * A process of its own holding one maintenance boundary worker, started as the notify role starts
 * it (control-plane/src/runtime/control-plane.ts: `startBoundaryWorker` with the system clock and
 * the process's outbox); or the baseline without the index, which reads every window every second
 * and asks the rule whether each is in a run. Answers `cpu` with its process.cpuUsage() and
 * `events` with when each event was handed to the outbox, which is right after its transaction
 * committed.
 */
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { connect } from '@nats-io/transport-node';
import { startBoundaryWorker } from '../../control-plane/src/maintenance/boundaries.ts';
import { windowsOfProjects } from '../../control-plane/src/maintenance/repo.ts';
import { runAt } from '../../control-plane/src/maintenance/schedule.ts';
import { scheduleOf } from '../../control-plane/src/maintenance/service.ts';
import { systemClock } from '../../control-plane/src/platform/clock.ts';
import { createSql } from '../../control-plane/src/platform/db/sql.ts';
import { createOutboxPublisher } from '../../control-plane/src/platform/outbox.ts';
import type { DomainEvent } from '../../shared/src/contracts/events.ts';
import { natsNames } from '../../shared/src/subjects.ts';
import { answer } from '../lib/child.ts';
import { benchLog } from '../lib/infra.ts';

export type WorkerArgs = { mode: 'worker' | 'scan'; databaseUrl: string; natsUrl: string; namespace: string; app: string };
export type WorkerCpu = {
  cpuUs: number;
  /** Statements sent to Postgres through the pool (begin and commit included; the listening connection's aside). */
  statements: number;
  /** Full (mark-compact) collections so far. */
  majorGcs: number;
  events: number;
  scans: number;
  inRun: number;
};
export type Handed = { window: string; kind: string; at: number };

const args = JSON.parse(process.argv[2]!) as WorkerArgs;
const sql = createSql(args.databaseUrl, { log: benchLog, applicationName: args.app });
// postgres.js calls options.debug for every statement a pool connection sends.
let statements = 0;
sql.options.debug = () => void statements++;
let majorGcs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    if ((e as unknown as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majorGcs++;
}).observe({ entryTypes: ['gc'] });
const handed: Handed[] = [];
let scans = 0;
let inRun = 0;
let stop: () => Promise<void>;

if (args.mode === 'worker') {
  const nc = await connect({ servers: args.natsUrl, name: args.app });
  // The relay republishes what a crash left unpublished; it belongs to the process (every role's
  // events), not to the worker, so it is set far apart here and the figures are the worker's.
  const outbox = createOutboxPublisher({ sql, nc, names: natsNames(args.namespace), log: benchLog, relayEveryMs: 3_600_000 });
  const recording = {
    publish(events: readonly DomainEvent[]) {
      const at = Date.now();
      for (const e of events) handed.push({ window: e.subject.id, kind: e.kind, at });
      return outbox.publish(events);
    },
  };
  const worker = startBoundaryWorker({ sql, log: benchLog, clock: systemClock, outbox: recording });
  stop = async () => {
    await worker.stop();
    outbox.stop();
    await nc.close();
  };
} else {
  const projectIds = (await sql<{ id: string }[]>`select id from projects`).map((r) => r.id);
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = Date.now();
      let n = 0;
      for (const w of await windowsOfProjects(sql, projectIds)) if (runAt(scheduleOf(w), started) !== null) n++;
      inRun = n;
      scans++;
      await new Promise((r) => setTimeout(r, Math.max(0, 1_000 - (Date.now() - started))));
    }
  })();
  stop = async () => {
    running = false;
    await loop;
  };
}

process.on('message', (m: { op: 'cpu' | 'events' }) => {
  if (m.op === 'events') void answer(handed);
  else {
    const c = process.cpuUsage();
    void answer({ cpuUs: c.user + c.system, statements, majorGcs, events: handed.length, scans, inRun } satisfies WorkerCpu);
  }
});
process.once('SIGTERM', () => {
  void stop()
    .then(() => sql.end({ timeout: 5 }))
    .finally(() => process.exit(0));
});
await answer({ pid: process.pid });
