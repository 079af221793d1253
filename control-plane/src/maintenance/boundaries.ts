import type { DomainEvent } from '../../../shared/src/contracts/events.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import type { Clock } from '../platform/clock.ts';
import type { Sql } from '../platform/db/sql.ts';
import { listenForWork } from '../platform/db/wakeup.ts';
import { recordEvent, type OutboxPublisher } from '../platform/outbox.ts';
import * as repo from './repo.ts';
import { boundaryStep } from './schedule.ts';
import { boundaryEvent, scheduleOf } from './service.ts';

/** Windows handled in one transaction at most, and boundaries of one window caught up in one go. */
const MAX_BATCH = 100;
const MAX_STEPS = 50;

export interface BoundaryWorker {
  /** Handles every boundary that has come by the clock's now; how many windows it looked at. */
  runNow(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Starts and ends maintenance windows at their boundaries: records each run as an occurrence
 * (what uptime leaves out) and publishes maintenance.started / maintenance.ended. Cost at idle is
 * one timer: each window keeps its next boundary in an indexed column, and the worker sleeps until
 * the earliest one (or until a window is written, which wakes it through Postgres). It never scans
 * the windows, let alone the monitors. Several processes share the work: a window is claimed with
 * FOR UPDATE SKIP LOCKED and its state, occurrences and events are written in one transaction, so
 * a crash repeats a boundary whole or not at all. Each step is judged at the boundary's own
 * instant, not at the time it is handled.
 */
export function startBoundaryWorker(opts: {
  sql: Sql;
  log: Logger;
  clock: Clock;
  outbox?: Pick<OutboxPublisher, 'publish'>;
  /** Longest sleep without a wake-up (a safety net; default 60 s). */
  pollMs?: number;
}): BoundaryWorker {
  const log = opts.log.child({ component: 'maintenance' });
  const pollMs = opts.pollMs ?? 60_000;

  const runBatch = () =>
    opts.sql.begin(async (tx) => {
      const now = new Date(opts.clock.now());
      const due = await repo.claimDue(tx, now, MAX_BATCH);
      const events: DomainEvent[] = [];
      for (const w of due) {
        const schedule = scheduleOf(w);
        let at: Date | null = w.next_boundary_at;
        let activeUntil = w.active_until;
        for (let i = 0; i < MAX_STEPS && at !== null && at <= now; i++) {
          const step = boundaryStep(schedule, activeUntil?.getTime() ?? null, at.getTime());
          let endedRunStart: Date | null = null;
          if (activeUntil !== null) endedRunStart = await repo.closeOccurrence(tx, w.id, at);
          if (step.run) await repo.openOccurrence(tx, w, new Date(step.run.start), new Date(step.run.end));
          if (step.event === 'maintenance.started') {
            events.push(await recordEvent(tx, boundaryEvent(w, step.event, at, new Date(step.run!.start), new Date(step.run!.end))));
          } else if (step.event === 'maintenance.ended') {
            events.push(await recordEvent(tx, boundaryEvent(w, step.event, at, endedRunStart, at)));
          }
          activeUntil = step.active_until === null ? null : new Date(step.active_until);
          at = step.next_boundary_at === null ? null : new Date(step.next_boundary_at);
        }
        await repo.saveBoundaryState(tx, w.id, activeUntil, at);
      }
      return { windows: due.length, events };
    });

  const runNow = async () => {
    let total = 0;
    // Published once every due batch is recorded: a slow or absent NATS delays the events (the
    // outbox relay has them), never the recording of the next boundaries.
    const recorded: DomainEvent[] = [];
    for (;;) {
      const { windows, events } = await runBatch();
      total += windows;
      if (events.length > 0) {
        log.info({ events: events.map((e) => ({ kind: e.kind, window: e.subject.id })) }, 'maintenance boundaries');
        recorded.push(...events);
      }
      if (windows < MAX_BATCH) break;
    }
    if (recorded.length > 0) {
      await opts.outbox?.publish(recorded).catch((err: unknown) => log.warn({ err }, 'maintenance events left to the outbox relay'));
    }
    return total;
  };

  const wakeup = listenForWork(opts.sql, 'maintenance_changed', log);
  let timer: unknown;
  let stopped = false;
  const arm = async () => {
    const earliest = await repo.earliestBoundary(opts.sql);
    if (timer !== undefined) opts.clock.clearTimer(timer);
    timer = undefined;
    if (earliest === null) return;
    timer = opts.clock.setTimer(() => wakeup.wake(), Math.min(Math.max(0, earliest.getTime() - opts.clock.now()), pollMs));
  };
  const loop = (async () => {
    while (!stopped) {
      try {
        await runNow();
        await arm();
      } catch (err) {
        log.warn({ err }, 'maintenance boundaries failed; trying again');
      }
      if (!stopped) await wakeup.wait(pollMs);
    }
  })();

  return {
    runNow,
    async stop() {
      stopped = true;
      if (timer !== undefined) opts.clock.clearTimer(timer);
      await wakeup.close();
      await loop;
    },
  };
}
