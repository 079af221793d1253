import { DeliverPolicy, jetstreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { startConsumer } from '../../platform/nats/consumer.ts';
import { CheckResult } from '../../../../shared/src/contracts/monitoring.ts';
import type { Logger } from '../../../../shared/src/logger.ts';
import type { NatsConnection } from '../../../../shared/src/nats.ts';
import type { Names } from '../../../../shared/src/subjects.ts';
import type { Sql } from '../../platform/db/sql.ts';
import type { OutboxPublisher } from '../../platform/outbox.ts';
import { storable } from './columns.ts';
import { storeResults } from './store.ts';

export const INGEST_CONSUMER = 'ingest';

export interface IngestOptions {
  sql: Sql;
  nc: NatsConnection;
  names: Names;
  log: Logger;
  outbox: OutboxPublisher;
  now?: () => Date;
  /** Most results written in one transaction. */
  batchSize?: number;
  /** Batches written at once, each on its own connection. */
  concurrency?: number;
  /**
   * How long a result may wait for others before a batch smaller than batchSize is written: the
   * results of one slot from several regions arrive close together and are evaluated together.
   */
  lingerMs?: number;
}

export interface Ingest {
  stats(): { stored: number; batches: number; invalid: number; failedBatches: number };
  stop(): Promise<void>;
}

/** A value Postgres refused (SQLSTATE class 22): the same rows would fail again, unlike a lost connection. */
function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('22');
}

/**
 * The ingest role: a durable pull consumer on RESULTS shared by every ingest process, through the
 * consumer kit (platform/nats/consumer.ts). Messages stream in continuously (the server stops at
 * max_ack_pending) and are written in batches that grow with the load. A batch is written in one
 * transaction and acknowledged only after it committed; a failed batch is handed back (nak with a
 * delay) and written again later, which the primary key makes harmless. A message that is not a
 * valid result is terminated and logged, never retried, never fatal; so is one row Postgres
 * refuses, found by splitting its batch.
 */
export async function startIngest(opts: IngestOptions): Promise<Ingest> {
  const log = opts.log.child({ component: 'ingest' });
  const now = opts.now ?? (() => new Date());
  const batchSize = opts.batchSize ?? 5_000;
  const consumer = await startConsumer({
    nc: opts.nc,
    log,
    stream: opts.names.streams.results,
    config: {
      durable_name: INGEST_CONSUMER,
      deliver_policy: DeliverPolicy.All,
      // A batch is written in well under a second; after a consumer-leader change, what was delivered
      // but not acknowledged comes back after this long.
      ack_wait: nanos(20_000),
      max_ack_pending: 20_000,
    },
    schema: CheckResult,
    accept: storable,
    noun: 'result',
    pull: { kind: 'continuous', maxMessages: batchSize * 2 },
    handler: {
      kind: 'batches',
      batchSize,
      lingerMs: opts.lingerMs ?? 200,
      concurrency: opts.concurrency ?? 2,
      refused: isDataError,
      async commit(results) {
        const events = await storeResults(opts.sql, results, now());
        // Recorded in the outbox with the batch: what fails to go out now, the relay sends later.
        if (events.length > 0)
          return () => opts.outbox.publish(events).catch((err: unknown) => log.warn({ err }, 'events left to the outbox relay'));
      },
    },
  });

  log.info('ingest started');
  return {
    stats: () => {
      const c = consumer.stats();
      return { stored: c.handled, batches: c.batches, invalid: c.invalid, failedBatches: c.failedBatches };
    },
    async stop() {
      await consumer.stop();
      log.info('ingest stopped');
    },
  };
}

/** Results not yet acknowledged by the ingest consumer: waiting plus in flight. */
export async function ingestLag(nc: NatsConnection, names: Names): Promise<number> {
  const info = await (await jetstreamManager(nc)).consumers.info(names.streams.results, INGEST_CONSUMER);
  return info.num_pending + info.num_ack_pending;
}
