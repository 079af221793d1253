import type { Logger } from '../../../shared/src/logger.ts';
import type { NatsConnection } from '../../../shared/src/nats.ts';
import type { AssignmentWatch } from '../assignments/watch.ts';
import type { Checker } from '../check/check.ts';
import type { Presence } from '../peers/presence.ts';
import type { PingEdge } from '../ping-edge.ts';
import type { ResultPublisher } from '../results/publisher.ts';
import type { Scheduler } from '../schedule/scheduler.ts';
import { settledWithin } from '../timing.ts';
import type { Stoppable } from './nats-signals.ts';
import type { OpsServer } from './ops-server.ts';
import type { SlotRuns } from './slot-runs.ts';

/** What a running agent holds; the last three are set as start gets to them. */
export type AgentParts = {
  nc: NatsConnection;
  log: Logger;
  connection: Stoppable;
  elections: Stoppable;
  scheduler: Pick<Scheduler, 'stop'>;
  presence: Pick<Presence, 'stop'>;
  slots: Pick<SlotRuns, 'cancel'>;
  publisher: ResultPublisher;
  checker: Pick<Checker, 'close'>;
  /** The canaries and their own checker (no address policy: the operator chose them). */
  canaries: { stop(): void; checker: Pick<Checker, 'close'> };
  assignments?: AssignmentWatch;
  /** "Test now" answers (check-tests.ts). */
  checkTests?: Stoppable;
  ops?: OpsServer;
  edge?: PingEdge;
};

export type StopLimits = {
  /** How long checks in flight may finish before they are cancelled. */
  drainTimeoutMs: number;
  /** How long results buffered may take to be acknowledged. */
  flushTimeoutMs: number;
};

/** Stops scheduling, leaves the region, lets checks in flight finish, flushes results. */
export async function stopAgent(parts: AgentParts, limits: StopLimits): Promise<void> {
  const { log, publisher } = parts;
  parts.connection.stop();
  parts.checkTests?.stop();
  parts.assignments?.stop();
  parts.canaries.stop();
  const draining = parts.scheduler.stop();
  // Leaving before the drain hands monitors over at once: peers only run slots after this point.
  await parts.presence.stop();
  if (!(await settledWithin(draining, limits.drainTimeoutMs))) {
    parts.slots.cancel();
    await draining;
  }
  if (!parts.nc.isClosed() && !(await publisher.flush(limits.flushTimeoutMs))) {
    log.warn({ unpublished: publisher.stats().buffered }, 'results left unpublished at stop');
  }
  publisher.close();
  parts.elections.stop();
  await parts.checker.close();
  await parts.canaries.checker.close();
  await parts.ops?.close();
  await parts.edge?.stop();
  log.info(publisher.stats(), 'probe agent stopped');
}

/** Releases what a failed start had set up; results not yet published are not waited for. */
export async function abandonStart(parts: AgentParts): Promise<void> {
  await parts.edge?.stop();
  parts.checkTests?.stop();
  parts.connection.stop();
  parts.elections.stop();
  parts.assignments?.stop();
  parts.canaries.stop();
  await parts.scheduler.stop();
  await parts.presence.stop();
  parts.publisher.close();
  await parts.checker.close();
  await parts.canaries.checker.close();
  await parts.ops?.close();
}
