import type { DomainEvent } from '../../../../shared/src/contracts/events.ts';
import type { Ping } from '../../../../shared/src/contracts/pings.ts';
import type { Logger } from '../../../../shared/src/logger.ts';
import type { Sql } from '../../platform/db/sql.ts';
import { isDatabaseUnavailable } from '../../platform/db/unavailable.ts';
import type { OutboxPublisher } from '../../platform/outbox.ts';
import type { BatchDone, Step } from './actors.ts';
import type { Deliveries } from './deliveries.ts';
import type { HeartbeatsProjection } from './projection.ts';
import { runSteps, type StepOutcome } from './steps.ts';

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
  log: Logger;
  outbox: Pick<OutboxPublisher, 'publish'>;
  projection: HeartbeatsProjection;
  /** Arms (or disarms, with null) the heartbeat's deadline in its partition's heap. */
  arm(id: string, at: number | null): void;
  /** The instant up to which the heartbeat's partition may be judged (partition-clock.ts). */
  judgedUntil(id: string): number;
  deliveries: Deliveries;
  /** Whether this process holds the heartbeat's partition now. */
  owns(id: string): boolean;
  /** Runs the heartbeat's step again a little later (a failure). */
  retry(id: string, changed: boolean): void;
  /** Puts a failed step's pings back in front of its heartbeat's queue, to be tried again by the retry. */
  requeue(id: string, pings: readonly Delivery[]): void;
}

export interface RunnerStats {
  pings: number;
  duplicates: number;
  latePings: number;
  events: number;
  failures: number;
}

export interface Runner {
  run(steps: Step<Delivery>[]): Promise<BatchDone | void>;
  /** Resolves when every publish in flight has settled. */
  drained(): Promise<void>;
  stats(): RunnerStats;
}

/**
 * Runs the actors' batches: the transaction (steps.ts), then, once it committed, the answers to
 * the stream, the deadlines, the KV projection and the events. Each step's clock is its
 * partition's (no later than the newest ping delivered or the last instant the server confirmed
 * that every ping had been delivered, see partition-clock.ts), and no later than the heartbeat's
 * next ping still queued: a step never judges a miss a ping already published answers.
 */
export function createRunner(opts: RunnerOptions): Runner {
  const { log, deliveries } = opts;
  const counters: RunnerStats = { pings: 0, duplicates: 0, latePings: 0, events: 0, failures: 0 };

  // Failures of each ping held for another attempt, by stream sequence (the database being away aside).
  const faults = new Map<number, number>();
  const failed = (step: Step<Delivery>, err: unknown) => {
    counters.failures++;
    opts.retry(step.id, step.changed);
    if (step.pings.length === 0) {
      log.warn({ err, heartbeatId: step.id }, 'heartbeat step failed; retrying');
      return;
    }
    if (!opts.owns(step.id)) {
      // Given back while the step ran: the next holder gets them from the stream.
      for (const { seq } of step.pings) {
        faults.delete(seq);
        deliveries.settle(seq, (m) => m.nak());
      }
      return;
    }
    const away = isDatabaseUnavailable(err);
    const kept: Delivery[] = [];
    for (const d of step.pings) {
      const attempts = (faults.get(d.seq) ?? 0) + (away ? 0 : 1);
      if (attempts >= MAX_PING_ATTEMPTS) {
        log.error({ err, heartbeatId: step.id, pingId: d.ping.id, attempts }, 'ping dropped: it failed on every attempt');
        faults.delete(d.seq);
        deliveries.settle(d.seq, (m) => m.term());
        continue;
      }
      faults.set(d.seq, attempts);
      kept.push(d);
    }
    // Held (a redelivery joins them) and tried again in front of the heartbeat's later pings:
    // handed back to the stream, they would come again after them and be taken for late pings.
    log.warn({ err, heartbeatId: step.id, pings: kept.length }, 'pings not applied yet; retrying');
    opts.requeue(step.id, kept);
  };

  const finish = async (step: Step<Delivery>, o: StepOutcome) => {
    for (const { seq } of step.pings) {
      faults.delete(seq);
      deliveries.settle(seq, (m) => m.ack());
    }
    counters.pings += step.pings.length;
    counters.duplicates += o.duplicates;
    if (o.late.pings > 0) {
      counters.latePings += o.late.pings;
      log.info({ heartbeatId: o.id, late: o.late }, "pings arrived after later pings: merged into the heartbeat's history");
    }
    if (!opts.owns(o.id)) {
      // Given back while the step ran: the next holder arms it and keeps its key.
      opts.arm(o.id, null);
      return;
    }
    opts.arm(o.id, o.deadline ? o.deadline.getTime() : null);
    if (o.projectId === null && (step.changed || step.pings.length > 0)) await opts.projection.remove(o.id);
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

  const clockOf = (step: Step<Delivery>): Date => {
    const until = opts.judgedUntil(step.id);
    return new Date(step.following ? Math.min(until, step.following.at.getTime()) : until);
  };

  const run = async (steps: Step<Delivery>[]): Promise<BatchDone | void> => {
    let outcomes: StepOutcome[];
    try {
      const inputs = steps.map((s) => ({ id: s.id, pings: s.pings.map((d) => ({ ping: d.ping, at: d.at })), now: clockOf(s) }));
      outcomes = await runSteps(opts.sql, inputs);
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
