import { DeliverPolicy, jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { durableConsumer } from '../nats/durable.ts';
import { CheckResult } from '../../../shared/src/contracts/monitoring.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import type { NatsConnection } from '../../../shared/src/nats.ts';
import type { Names } from '../../../shared/src/subjects.ts';
import type { Sql } from '../db/sql.ts';
import type { OutboxPublisher } from '../events/outbox.ts';
import { storeResults } from './store.ts';

export const INGEST_CONSUMER = 'ingest';

export interface IngestOptions {
  sql: Sql;
  nc: NatsConnection;
  names: Names;
  log: Logger;
  outbox: OutboxPublisher;
  now?: () => Date;
  batchSize?: number;
}

export interface Ingest {
  stats(): { stored: number; batches: number; invalid: number; failedBatches: number };
  stop(): Promise<void>;
}

/**
 * The ingest role: a durable pull consumer on RESULTS shared by every ingest process. Batches
 * are written in one transaction and acknowledged only after it committed; a failed batch is
 * handed back (nak with a delay) and written again later, which the primary key makes harmless.
 * A message that is not a valid result is terminated and logged, never retried, never fatal.
 */
export async function startIngest(opts: IngestOptions): Promise<Ingest> {
  const log = opts.log.child({ component: 'ingest' });
  const now = opts.now ?? (() => new Date());
  const consumer = await durableConsumer(opts.nc, opts.names.streams.results, {
    durable_name: INGEST_CONSUMER,
    deliver_policy: DeliverPolicy.All,
    // A batch is written in well under a second; after a consumer-leader change, what was delivered
    // but not acknowledged comes back after this long.
    ack_wait: nanos(20_000),
    max_ack_pending: 20_000,
  });
  const counters = { stored: 0, batches: 0, invalid: 0, failedBatches: 0 };
  let stopped = false;

  const handle = async (msgs: JsMsg[]) => {
    const valid: { msg: JsMsg; result: CheckResult }[] = [];
    for (const msg of msgs) {
      let parsed: ReturnType<typeof CheckResult.safeParse> | undefined;
      try {
        parsed = CheckResult.safeParse(msg.json());
      } catch {
        parsed = undefined;
      }
      if (parsed?.success) valid.push({ msg, result: parsed.data });
      else {
        counters.invalid++;
        log.warn({ subject: msg.subject, seq: msg.seq, issues: parsed?.error?.issues.slice(0, 3) }, 'invalid result terminated');
        msg.term();
      }
    }
    if (valid.length === 0) return;
    try {
      const events = await storeResults(opts.sql, valid.map((v) => v.result), now());
      for (const v of valid) v.msg.ack();
      counters.stored += valid.length;
      counters.batches++;
      if (events.length > 0) await opts.outbox.publish(events);
    } catch (err) {
      counters.failedBatches++;
      log.error({ err, size: valid.length }, 'result batch not stored; redelivering later');
      for (const v of valid) v.msg.nak(5_000);
    }
  };

  const loop = (async () => {
    while (!stopped) {
      const batch: JsMsg[] = [];
      try {
        const iter = await consumer.fetch({ max_messages: opts.batchSize ?? 1_000, expires: 1_000 });
        for await (const m of iter) batch.push(m);
      } catch (err) {
        if (stopped) break;
        log.warn({ err }, 'fetching results failed; retrying');
        await new Promise((r) => setTimeout(r, 1_000));
        continue;
      }
      await handle(batch);
    }
  })();

  log.info('ingest started');
  return {
    stats: () => ({ ...counters }),
    async stop() {
      stopped = true;
      await loop;
      log.info('ingest stopped');
    },
  };
}

/** Results not yet acknowledged by the ingest consumer: waiting plus in flight. */
export async function ingestLag(nc: NatsConnection, names: Names): Promise<number> {
  const info = await (await jetstreamManager(nc)).consumers.info(names.streams.results, INGEST_CONSUMER);
  return info.num_pending + info.num_ack_pending;
}
