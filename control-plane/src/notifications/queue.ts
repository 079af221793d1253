import { jetstream } from '@nats-io/jetstream';
import type { NotifyJob } from '../../../shared/src/contracts/notify.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import type { NatsConnection } from '../../../shared/src/nats.ts';
import type { Names } from '../../../shared/src/subjects.ts';
import type { Sql } from '../platform/db/sql.ts';
import { markQueued, requeued, unqueued } from './repo.ts';

export interface QueueDeps {
  sql: Sql;
  nc: NatsConnection;
  names: Names;
  log: Logger;
}

type Job = { id: string; integration_id: string; type: NotifyJob['type']; attempts?: number };

async function publishAll<J extends Job>(deps: QueueDeps, jobs: readonly J[], msgId: (j: J) => string): Promise<string[]> {
  const js = jetstream(deps.nc);
  const results = await Promise.allSettled(
    jobs.map((j) => {
      const job: NotifyJob = { delivery_id: j.id, integration_id: j.integration_id, type: j.type };
      return js.publish(deps.names.subjects.notify(j.type), JSON.stringify(job), { msgID: msgId(j), timeout: 5_000 });
    }),
  );
  const failed = results.filter((r) => r.status === 'rejected');
  if (failed.length > 0) {
    deps.log.warn(
      { err: (failed[0] as PromiseRejectedResult).reason, count: failed.length },
      'deliveries not queued yet; the relay will retry',
    );
  }
  return jobs.filter((_, i) => results[i]!.status === 'fulfilled').map((j) => j.id);
}

/**
 * Publishes the NOTIFY messages of deliveries just committed (`Nats-Msg-Id` = delivery id). A
 * failure here loses nothing: the rows stay unqueued and the relay publishes them.
 */
export async function enqueue(deps: QueueDeps, jobs: readonly Job[]): Promise<void> {
  if (jobs.length === 0) return;
  await markQueued(deps.sql, await publishAll(deps, jobs, (j) => j.id));
}

/**
 * Publishes what no message stands for: deliveries never queued, and deliveries overdue by
 * `lostAfterMs`. A rescued delivery may end up with two messages; the claim lets only one send.
 */
export async function relay(deps: QueueDeps, lostAfterMs: number): Promise<number> {
  const rows = await unqueued(deps.sql, lostAfterMs);
  if (rows.length === 0) return 0;
  // A delivery never queued keeps its id: a first publish that landed without its ack is then
  // dropped as a repeat. An overdue one had a message with an id the stream may still remember
  // (the duplicate window is 10 min), and a JetStream consumer can skip a stored message after a
  // leader change: its rescue gets an id of its own, the same for every relay reading that row.
  const done = await publishAll(deps, rows, (r) => (r.queued_us === null ? r.id : `${r.id}:${r.queued_us}`));
  await requeued(deps.sql, done);
  return done.length;
}
