import type { Config } from '../../../shared/src/config.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import type { Metrics } from '../../../shared/src/metrics.ts';
import { addressPolicy } from '../../../shared/src/net/lookup.ts';
import type { DomainEvent } from '../../../shared/src/contracts/events.ts';
import { alertActions, alertIdOf } from '../alerts/links.ts';
import type { Sql } from '../platform/db/sql.ts';
import type { Keys } from '../platform/http/context.ts';
import { defaultBackoff } from './backoff.ts';
import { createHttpClient } from './channels/http.ts';
import { createChannels } from './channels/index.ts';
import { startRouter, type RouterStats } from './router.ts';
import { startDeliveryWorker, type WorkerStats } from './worker.ts';
import { startSubscriberSender, type SenderStats } from '../status-pages/subscribers/sender.ts';

/** Knobs of the notify role, passed explicitly (tests shorten the back-off, the lease and the polling). */
export interface NotifyTuning {
  backoffBaseMs?: number;
  backoffCapMs?: number;
  /** How long a delivery's claim lasts (default 60 s): a worker that dies mid-send frees it then. */
  leaseMs?: number;
  /** How often the outbox and the deliveries are looked at without a wake-up (default 1 s). */
  pollMs?: number;
  concurrency?: number;
  httpTimeoutMs?: number;
}

export interface NotifyRoleOptions extends NotifyTuning {
  sql: Sql;
  log: Logger;
  config: Config;
  keys: Keys;
  now?: () => Date;
  /** The process's metrics: deliveries by channel and outcome. */
  metrics?: Metrics;
  /** Publishes events the workers record (an integration failing) on EVENTS at once; else the outbox relay does. */
  publish?: (events: DomainEvent[]) => Promise<void>;
}

export interface NotifyRole {
  /** The workers' counters, the router's, and the status page subscriber sender's. */
  stats(): WorkerStats & { router: RouterStats; subscribers: SenderStats };
  /** Routes the alert events waiting now (also done on every wake-up and poll); the events routed. */
  route(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * The notify role: alert events recorded in the outbox -> their deliveries (the router) ->
 * integrations (the workers). Both queues are Postgres tables (ADR 0023); NATS carries none of it.
 */
export async function startNotifyRole(opts: NotifyRoleOptions): Promise<NotifyRole> {
  const log = opts.log.child({ component: 'notify' });
  const now = opts.now ?? (() => new Date());
  const pollMs = opts.pollMs ?? 1_000;
  const http = createHttpClient({ ...addressPolicy(opts.config), timeoutMs: opts.httpTimeoutMs ?? 10_000 });
  const channels = createChannels({ http, smtp: { url: opts.config.SMTP_URL, from: opts.config.SMTP_FROM }, now });

  const worker = startDeliveryWorker({
    sql: opts.sql,
    log: opts.log,
    integrationSecrets: opts.keys.integrationSecrets,
    channels,
    maxAttempts: opts.config.NOTIFY_MAX_ATTEMPTS,
    backoff: { baseMs: opts.backoffBaseMs ?? defaultBackoff.baseMs, capMs: opts.backoffCapMs ?? defaultBackoff.capMs },
    leaseMs: opts.leaseMs ?? 60_000,
    // Sends in flight, each holding its slot through its claim and its record as well: at 64 the
    // slots waited on Postgres round trips more than on receivers (docs/benchmarks.md, alerts).
    // One receiver still gets at most 64 connections at once (channels/http.ts).
    concurrency: opts.concurrency ?? 256,
    pollMs,
    now,
    actionsFor: (n) => {
      const alertId = alertIdOf(n);
      return alertId ? alertActions(opts.keys.alertLinks, opts.config.PUBLIC_URL, alertId, n.subject) : undefined;
    },
    ...(opts.publish ? { publish: opts.publish } : {}),
    ...(opts.metrics ? { metrics: opts.metrics } : {}),
  });
  const router = startRouter({ sql: opts.sql, log: opts.log, pollMs, now });
  // Status page subscribers: the same kind of queue, apart from the alert path (ADR 0042).
  const subscribers = startSubscriberSender({
    sql: opts.sql,
    log: opts.log,
    http,
    smtp: { url: opts.config.SMTP_URL, from: opts.config.SMTP_FROM },
    publicUrl: opts.config.PUBLIC_URL,
    linkKey: opts.keys.subscriberLinks,
    sealKey: opts.keys.integrationSecrets,
    maxAttempts: opts.config.NOTIFY_MAX_ATTEMPTS,
    backoff: { baseMs: opts.backoffBaseMs ?? defaultBackoff.baseMs, capMs: opts.backoffCapMs ?? defaultBackoff.capMs },
    leaseMs: opts.leaseMs ?? 60_000,
    concurrency: 32,
    pollMs,
    now,
  });
  log.info('notify started');

  return {
    stats: () => ({ ...worker.stats(), router: router.stats(), subscribers: subscribers.stats() }),
    route: () => router.routeNow(),
    async stop() {
      await router.stop();
      await subscribers.stop();
      await worker.stop();
      await http.close();
      log.info('notify stopped');
    },
  };
}
