import type { DomainEvent } from '../../../shared/src/contracts/events.ts';
import type { Ping } from '../../../shared/src/contracts/pings.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import type { Sql } from '../db/sql.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import type { OutboxPublisher } from '../events/outbox.ts';
import type { BatchDone, Step } from './actors.ts';
import type { Clock } from './clock.ts';
import type { Deliveries } from './deliveries.ts';
import type { HeartbeatsProjection } from './projection.ts';
import { runSteps, type StepOutcome } from './steps.ts';
import type { DeadlineTimers } from './timers.ts';

/** A ping waiting for its actor: its stream sequence (to answer every delivery) and the stream's timestamp. */
export interface Delivery {
  seq: number;
  ping: Ping;
  at: Date;
}

/**
 * A ping whose step failed this often is terminated (and logged) rather than retried forever;
 * failures because the database is away do not count.
 */
const MAX_PING_ATTEMPTS = 20;
const MAX_PUBLISHING = 16;

export interface RunnerOptions {
  sql: Sql;
  clock: Clock;
  log: Logger;
  outbox: Pick<OutboxPublisher, 'publish'>;
  projection: HeartbeatsProjection;
  timers: Pick<DeadlineTimers, 'set'>;
  deliveries: Deliveries;
  /** Whether this process holds the heartbeat's partition now. */
  owns(id: string): boolean;
  /** Runs the heartbeat's step again a little later (a failure). */
  retry(id: string, changed: boolean): void;
  /** Puts a failed step's ping back in front of its heartbeat's queue, to be tried again by the retry. */
  requeue(id: string, ping: Delivery): void;
}

export interface Runner {
  run(steps: Step<Delivery>[]): Promise<BatchDone | void>;
  /** Resolves when every publish in flight has settled. */
  drained(): Promise<void>;
  stats(): { pings: number; duplicates: number; latePings: number; events: number; failures: number };
}

/**
 * Runs the actors' batches: the transaction (steps.ts), then, once it committed, the answers to
 * the stream, the deadlines, the KV projection and the events.
 */
export function createRunner(opts: RunnerOptions): Runner {
  const { log, deliveries } = opts;
  const counters = { pings: 0, duplicates: 0, latePings: 0, events: 0, failures: 0 };

  // Failures of each ping held for another attempt, by stream sequence (the database being away aside).
  const faults = new Map<number, number>();
  const failed = (step: Step<Delivery>, err: unknown) => {
    counters.failures++;
    opts.retry(step.id, step.changed);
    if (!step.ping) {
      log.warn({ err, heartbeatId: step.id }, 'heartbeat step failed; retrying');
      return;
    }
    const { seq } = step.ping;
    if (!opts.owns(step.id)) {
      // Given back while the step ran: the next holder gets it from the stream.
      faults.delete(seq);
      deliveries.settle(seq, (m) => m.nak());
      return;
    }
    const attempts = (faults.get(seq) ?? 0) + (isDatabaseUnavailable(err) ? 0 : 1);
    if (attempts >= MAX_PING_ATTEMPTS) {
      log.error({ err, heartbeatId: step.id, pingId: step.ping.ping.id, attempts }, 'ping dropped: it failed on every attempt');
      faults.delete(seq);
      deliveries.settle(seq, (m) => m.term());
      return;
    }
    faults.set(seq, attempts);
    // Held (a redelivery joins it) and tried again in front of the heartbeat's later pings: handed
    // back to the stream, it would come again after them and be taken for a replay.
    log.warn({ err, heartbeatId: step.id, attempts }, 'ping not applied yet; retrying');
    opts.requeue(step.id, step.ping);
  };

  const finish = async (step: Step<Delivery>, o: StepOutcome) => {
    if (step.ping) {
      faults.delete(step.ping.seq);
      deliveries.settle(step.ping.seq, (m) => m.ack());
      counters.pings++;
      if (o.duplicate) counters.duplicates++;
      if (o.late) {
        counters.latePings++;
        log.info({ heartbeatId: o.id, pingId: step.ping.ping.id, merged: o.late.merged, alerts: o.late.alerts }, 'ping arrived after later pings: merged into the heartbeat\'s history');
      }
    }
    if (!opts.owns(o.id)) {
      // Given back while the step ran: the next holder arms it and keeps its key.
      opts.timers.set(o.id, null);
      return;
    }
    opts.timers.set(o.id, o.deadline ? o.deadline.getTime() : null);
    if (o.projectId === null && (step.changed || step.ping)) await opts.projection.remove(o.id);
    else if (o.projectId !== null && step.changed) await opts.projection.put(o.id, o.projectId);
  };

  // Publishing waits for acks: it must not hold a batch slot, or a burst of misses would be
  // stored only as fast as NATS answers (the batch's actors wait for it, keeping their events
  // in order). Bounded, so a slow NATS slows the batches down rather than piling up.
  const publishing = new Set<Promise<void>>();
  const publish = async (events: DomainEvent[]): Promise<BatchDone> => {
    if (events.length === 0) return { after: Promise.resolve() };
    while (publishing.size >= MAX_PUBLISHING) await Promise.race(publishing);
    const done: Promise<void> = opts.outbox
      .publish(events)
      .catch((err: unknown) => log.warn({ err }, 'events left to the outbox relay'))
      .finally(() => publishing.delete(done));
    publishing.add(done);
    return { after: done };
  };

  const run = async (steps: Step<Delivery>[]): Promise<BatchDone | void> => {
    let outcomes: StepOutcome[];
    try {
      const inputs = steps.map((s) => ({ id: s.id, ...(s.ping ? { ping: { ping: s.ping.ping, at: s.ping.at } } : {}) }));
      outcomes = await runSteps(opts.sql, inputs, new Date(opts.clock.now()));
    } catch (err) {
      // The database away fails every step alike: they all wait for the retry.
      if (steps.length === 1 || isDatabaseUnavailable(err)) {
        for (const s of steps) failed(s, err);
        return;
      }
      // Usually the database is away; but one bad step must not hold back the others.
      log.warn({ err, steps: steps.length }, 'batch failed; retrying its steps one by one');
      const after: Promise<unknown>[] = [];
      for (const s of steps) {
        const done = await run([s]);
        if (done) after.push(done.after);
      }
      return { after: Promise.all(after) };
    }
    await Promise.all(
      outcomes.map((o, i) =>
        finish(steps[i]!, o).catch((err: unknown) => {
          log.warn({ err, heartbeatId: o.id }, 'heartbeats projection not updated; retrying');
          opts.retry(o.id, true);
        }),
      ),
    );
    const events = outcomes.flatMap((o) => o.events);
    counters.events += events.length;
    return publish(events);
  };

  return {
    run,
    drained: async () => {
      await Promise.all(publishing);
    },
    stats: () => ({ ...counters }),
  };
}
