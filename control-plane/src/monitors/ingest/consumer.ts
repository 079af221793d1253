import { DeliverPolicy, jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { durableConsumer } from '../../platform/nats/durable.ts';
import { consumeFollowingLeader } from '../../platform/nats/follow-leader.ts';
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

interface Item {
  msg: JsMsg;
  result: CheckResult;
}

/** A value Postgres refused (SQLSTATE class 22): the same rows would fail again, unlike a lost connection. */
function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('22');
}

/**
 * The ingest role: a durable pull consumer on RESULTS shared by every ingest process. Messages
 * stream in continuously (the server stops at max_ack_pending) and queue here; each writer takes
 * what has queued, up to a batch, while the next batch keeps arriving, so batches grow with the
 * load. A batch is written in one transaction and acknowledged only after it committed; a failed
 * batch is handed back (nak with a delay) and written again later, which the primary key makes
 * harmless. A message that is not a valid result is terminated and logged, never retried, never
 * fatal; so is one row Postgres refuses, found by splitting its batch.
 */
export async function startIngest(opts: IngestOptions): Promise<Ingest> {
  const log = opts.log.child({ component: 'ingest' });
  const now = opts.now ?? (() => new Date());
  const batchSize = opts.batchSize ?? 5_000;
  const lingerMs = opts.lingerMs ?? 200;
  const consumer = await durableConsumer(opts.nc, opts.names.streams.results, {
    durable_name: INGEST_CONSUMER,
    deliver_policy: DeliverPolicy.All,
    // A batch is written in well under a second; after a consumer-leader change, what was delivered
    // but not acknowledged comes back after this long.
    ack_wait: nanos(20_000),
    max_ack_pending: 20_000,
  });
  const counters = { stored: 0, batches: 0, invalid: 0, failedBatches: 0 };
  const queue: JsMsg[] = [];
  // When the oldest queued message arrived.
  let oldestAt = 0;
  const idle: (() => void)[] = [];
  let stopping = false;
  const wakeAll = () => {
    for (const w of idle.splice(0)) w();
  };
  const ready = () => queue.length >= batchSize || (queue.length > 0 && performance.now() - oldestAt >= lingerMs);

  const parse = (msgs: readonly JsMsg[]): Item[] => {
    const valid: Item[] = [];
    for (const msg of msgs) {
      let parsed: ReturnType<typeof CheckResult.safeParse> | undefined;
      try {
        parsed = CheckResult.safeParse(msg.json());
      } catch {
        parsed = undefined;
      }
      if (parsed?.success && storable(parsed.data)) valid.push({ msg, result: parsed.data });
      else {
        counters.invalid++;
        log.warn({ subject: msg.subject, seq: msg.seq, issues: parsed?.error?.issues.slice(0, 3) }, 'invalid result terminated');
        msg.term();
      }
    }
    return valid;
  };

  const write = async (items: readonly Item[]): Promise<void> => {
    let events;
    try {
      events = await storeResults(
        opts.sql,
        items.map((i) => i.result),
        now(),
      );
    } catch (err) {
      if (isDataError(err) && items.length > 1) {
        const half = Math.ceil(items.length / 2);
        await write(items.slice(0, half));
        await write(items.slice(half));
        return;
      }
      if (isDataError(err)) {
        counters.invalid++;
        log.warn({ err, subject: items[0]!.msg.subject, seq: items[0]!.msg.seq }, 'result refused by the database terminated');
        items[0]!.msg.term();
        return;
      }
      counters.failedBatches++;
      log.error({ err, size: items.length }, 'result batch not stored; redelivering later');
      for (const i of items) i.msg.nak(5_000);
      return;
    }
    for (const i of items) i.msg.ack();
    counters.stored += items.length;
    counters.batches++;
    // Recorded in the outbox with the batch: what fails to go out now, the relay sends later.
    if (events.length > 0) await opts.outbox.publish(events).catch((err: unknown) => log.warn({ err }, 'events left to the outbox relay'));
  };

  const writer = async () => {
    for (;;) {
      if (stopping) return;
      if (!ready()) {
        // A timer may fire a little before performance.now() says the linger is over: without
        // another wake-up, the queue would wait for the next batchSize messages.
        if (queue.length > 0) setTimeout(wakeAll, Math.ceil(lingerMs - (performance.now() - oldestAt)) + 1).unref();
        await new Promise<void>((r) => idle.push(r));
        continue;
      }
      const msgs = queue.splice(0, batchSize);
      // What is left has waited at least as long: the next idle writer may take it at once.
      if (queue.length > 0) wakeAll();
      const valid = parse(msgs);
      if (valid.length > 0) await write(valid).catch((err: unknown) => log.error({ err }, 'result batch failed'));
    }
  };

  const messages = await consumeFollowingLeader({
    nc: opts.nc,
    consumer,
    stream: opts.names.streams.results,
    durable: INGEST_CONSUMER,
    log,
    options: {
      max_messages: batchSize * 2,
      callback: (m) => {
        if (queue.push(m) === 1) {
          oldestAt = performance.now();
          setTimeout(wakeAll, lingerMs).unref();
        }
        if (queue.length === batchSize) wakeAll();
      },
    },
  });
  const writers = Array.from({ length: opts.concurrency ?? 2 }, () => writer());

  log.info('ingest started');
  return {
    stats: () => ({ ...counters }),
    async stop() {
      stopping = true;
      await messages.close().catch(() => {});
      wakeAll();
      await Promise.all(writers);
      // Handed back at once, for another ingest process or the next start.
      for (const m of queue.splice(0)) m.nak();
      log.info('ingest stopped');
    },
  };
}

/** Results not yet acknowledged by the ingest consumer: waiting plus in flight. */
export async function ingestLag(nc: NatsConnection, names: Names): Promise<number> {
  const info = await (await jetstreamManager(nc)).consumers.info(names.streams.results, INGEST_CONSUMER);
  return info.num_pending + info.num_ack_pending;
}
