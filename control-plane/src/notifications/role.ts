import type { Config } from '../../../shared/src/config.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import type { Metrics } from '../../../shared/src/metrics.ts';
import type { NatsConnection } from '../../../shared/src/nats.ts';
import type { Names } from '../../../shared/src/subjects.ts';
import { addressPolicy } from '../../../shared/src/net/lookup.ts';
import type { Sql } from '../platform/db/sql.ts';
import type { Keys } from '../platform/http/context.ts';
import { defaultBackoff } from './backoff.ts';
import { createChannels } from './channels/index.ts';
import { createHttpClient } from './channels/http.ts';
import { relayEvents, startEventsConsumer } from './events.ts';
import { relay } from './queue.ts';
import { startDeliveryWorker, type WorkerStats } from './worker.ts';

/** Knobs of the notify role, passed explicitly (tests shorten the back-off and the lease). */
export interface NotifyTuning {
  backoffBaseMs?: number;
  backoffCapMs?: number;
  /** Claim length and ack wait of a delivery message (default 60 s). */
  leaseMs?: number;
  relayEveryMs?: number;
  /**
   * A pending delivery this overdue is presumed to have lost its message and is queued again
   * (default 1 min; a second message costs one claim, a lost one a notification).
   */
  lostAfterMs?: number;
  /**
   * An alert event published this long ago whose deliveries no consumer has made is dispatched
   * from the outbox table (default 2 min: well past the consumer's lag under a burst).
   */
  eventsLostAfterMs?: number;
  concurrency?: number;
  httpTimeoutMs?: number;
}

export interface NotifyRoleOptions extends NotifyTuning {
  sql: Sql;
  nc: NatsConnection;
  names: Names;
  log: Logger;
  config: Config;
  keys: Keys;
  now?: () => Date;
  /** The process's metrics: deliveries by channel and outcome. */
  metrics?: Metrics;
}

export interface NotifyRole {
  /** The delivery worker's counters, and how many transactions made deliveries from EVENTS. */
  stats(): WorkerStats & { eventBatches: number };
  /** Publishes the deliveries no message stands for now (also done on a timer). */
  relay(): Promise<number>;
  /** Makes the deliveries of alert events EVENTS did not bring in time (also done on a timer). */
  relayEvents(): Promise<number>;
  stop(): Promise<void>;
}

/** The notify role: EVENTS -> deliveries, the NOTIFY work queue -> integrations, and the relay between them. */
export async function startNotifyRole(opts: NotifyRoleOptions): Promise<NotifyRole> {
  const log = opts.log.child({ component: 'notify' });
  const now = opts.now ?? (() => new Date());
  const http = createHttpClient({ ...addressPolicy(opts.config), timeoutMs: opts.httpTimeoutMs ?? 10_000 });
  const channels = createChannels({ http, smtp: { url: opts.config.SMTP_URL, from: opts.config.SMTP_FROM }, now });
  const deps = { sql: opts.sql, nc: opts.nc, names: opts.names, log: opts.log };
  const lostAfterMs = opts.lostAfterMs ?? 60_000;

  const worker = await startDeliveryWorker({
    ...deps,
    integrationSecrets: opts.keys.integrationSecrets,
    channels,
    maxAttempts: opts.config.NOTIFY_MAX_ATTEMPTS,
    backoff: { baseMs: opts.backoffBaseMs ?? defaultBackoff.baseMs, capMs: opts.backoffCapMs ?? defaultBackoff.capMs },
    leaseMs: opts.leaseMs ?? 60_000,
    concurrency: opts.concurrency ?? 64,
    ...(opts.metrics ? { metrics: opts.metrics } : {}),
  });
  const events = await startEventsConsumer({ ...deps, now }).catch(async (err: unknown) => {
    await worker.stop();
    throw err;
  });

  const relayNow = () => relay(deps, lostAfterMs);
  const relayEventsNow = () => relayEvents(deps, opts.eventsLostAfterMs ?? 120_000);
  let relaying: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    relaying ??= relayEventsNow()
      .catch((err: unknown) => log.warn({ err }, 'event relay failed'))
      .then(relayNow)
      .catch((err: unknown) => log.warn({ err }, 'delivery relay failed'))
      .finally(() => (relaying = undefined));
  }, opts.relayEveryMs ?? 5_000);
  timer.unref();
  log.info('notify started');

  return {
    stats: () => ({ ...worker.stats(), eventBatches: events.stats().batches }),
    relay: relayNow,
    relayEvents: relayEventsNow,
    async stop() {
      clearInterval(timer);
      await relaying;
      await events.stop();
      await worker.stop();
      await http.close();
      log.info('notify stopped');
    },
  };
}
