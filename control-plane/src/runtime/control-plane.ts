import type { Config } from '../../../shared/src/config.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import type { NatsConnection } from '../../../shared/src/nats.ts';
import { ensureStreams } from '../../../shared/src/provision.ts';
import { natsNames } from '../../../shared/src/subjects.ts';
import { buildApp, type App } from './app.ts';
import type { Sql } from '../platform/db/sql.ts';
import type { Role } from './roles.ts';
import { deriveKeys, masterKey } from './keys.ts';
import { startAssigner } from '../monitors/assign/assigner.ts';
import { moveStoredUrlCredentials } from '../monitors/stored-credentials.ts';
import { dateNow, systemClock, type Clock } from '../platform/clock.ts';
import { startDeadline } from '../heartbeats/deadline/role.ts';
import { startRegionHealth } from '../monitors/regions/role.ts';
import { createOutboxPublisher, unpublishedBacklog } from '../platform/outbox.ts';
import { ingestLag, startIngest } from '../monitors/ingest/consumer.ts';
import { createMetrics, metricsOnOwnPort, type Metrics } from '../../../shared/src/metrics.ts';
import { startRetention } from './retention.ts';
import { startNotifyRole, type NotifyTuning } from '../notifications/role.ts';
import { startBoundaryWorker } from '../maintenance/boundaries.ts';
import { startIncidentDrafter } from '../status-pages/incidents/drafter.ts';
import { startDomainExpiry, type DomainExpiryJob } from '../monitors/domain-expiry/job.ts';
import { startOpsServer } from './ops.ts';

export interface ControlPlaneOptions {
  config: Config;
  log: Logger;
  sql: Sql;
  nc: NatsConnection;
  roles: readonly Role[];
  /**
   * Port override of the process's listener: the API, or without the api role the one serving
   * /healthz, /readyz and /metrics (tests pass 0 for a free port).
   */
  port?: number;
  /** The process's metrics registry (shared with an agent in the same process). */
  metrics?: Metrics;
  /**
   * The clock of every role (platform/clock.ts); the system clock when left out. Tests pass one
   * they advance.
   */
  clock?: Clock;
  /** Knobs of the notify role (tests shorten its back-off and lease). */
  notify?: NotifyTuning;
  /** How often the assign role judges the probe regions (default 5 s; tests shorten it). */
  regionHealthPeriodMs?: number;
}

export interface RunningControlPlane {
  keys: ReturnType<typeof deriveKeys>;
  /** Where the API answers, when this process runs the api role. */
  url?: string;
  /** Where /healthz, /readyz and /metrics answer: the API, or a listener of their own (without the api role, or on a METRICS_PORT apart from PORT). */
  metricsUrl: string;
  app?: App;
  /** The domain-expiry lookups, when this process runs the ingest role (tests run a pass at will). */
  domainExpiry?: DomainExpiryJob;
  stop(): Promise<void>;
}

/**
 * Starts the roles of one control-plane process. Streams are provisioned by every process (the
 * calls are idempotent), so any process may be the first one started.
 */
export async function startControlPlane(opts: ControlPlaneOptions): Promise<RunningControlPlane> {
  const { config, log } = opts;
  const keys = deriveKeys(masterKey(config));
  const metrics = opts.metrics ?? createMetrics();
  const names = natsNames(config.NATS_NAMESPACE);
  const clock = opts.clock ?? systemClock;
  const now = dateNow(clock);
  await ensureStreams(opts.nc, names, { replicas: config.NATS_REPLICAS });
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const s of [...stops].reverse()) await s();
  };
  let app: App | undefined;
  let domainExpiry: DomainExpiryJob | undefined;
  let url: string | undefined;
  let metricsUrl: string | undefined;
  try {
    const needsOutbox = opts.roles.includes('ingest') || opts.roles.includes('deadline') || opts.roles.includes('assign');
    const outbox = needsOutbox ? createOutboxPublisher({ sql: opts.sql, nc: opts.nc, names, log }) : undefined;
    if (outbox) stops.push(async () => outbox.stop());

    if (opts.roles.includes('assign')) {
      // The database keeps passwords sealed only, those of monitors stored before they were
      // split off their URL included.
      await moveStoredUrlCredentials(opts.sql, keys.checkCredentials, log);
      const assigner = await startAssigner({
        sql: opts.sql,
        nc: opts.nc,
        names,
        log,
        replicas: config.NATS_REPLICAS,
        checkKey: keys.checkCredentials,
        now: () => clock.now(),
      });
      stops.push(assigner.stop);
      const regionHealth = await startRegionHealth({
        sql: opts.sql,
        nc: opts.nc,
        names,
        log,
        replicas: config.NATS_REPLICAS,
        clock,
        outbox: outbox!,
        ...(opts.regionHealthPeriodMs !== undefined ? { periodMs: opts.regionHealthPeriodMs } : {}),
      });
      stops.push(regionHealth.stop);
    }
    if (opts.roles.includes('ingest')) {
      const ingest = await startIngest({ sql: opts.sql, nc: opts.nc, names, log, outbox: outbox!, now });
      metrics.counter(
        'uptime_ingest_results_stored_total',
        'Check results written to Postgres by this process.',
        () => ingest.stats().stored,
      );
      metrics.gauge('uptime_ingest_lag', 'Results in RESULTS not yet acknowledged by ingest (all processes).', () =>
        ingestLag(opts.nc, names),
      );
      // Read by the ingest processes, as the lag is: a figure of the deployment, not of a process.
      // The two gauges of one scrape share one read.
      let backlogRead: ReturnType<typeof unpublishedBacklog> | undefined;
      const backlog = () => (backlogRead ??= unpublishedBacklog(opts.sql).finally(() => (backlogRead = undefined)));
      metrics.gauge(
        'uptime_outbox_unpublished',
        'Events recorded in Postgres and not yet stored on EVENTS (all processes).',
        async () => (await backlog()).count,
      );
      metrics.gauge(
        'uptime_outbox_oldest_unpublished_seconds',
        'How long the oldest event not yet stored on EVENTS has waited; 0 when none waits.',
        async () => (await backlog()).oldestSeconds,
      );
      stops.push(ingest.stop);
      // History past its retention: results, published events, finished deliveries, trigger calls.
      const retention = startRetention({
        sql: opts.sql,
        log,
        days: { results: config.RESULTS_RETENTION_DAYS, history: config.HISTORY_RETENTION_DAYS },
        now,
      });
      stops.push(async () => retention.stop());
      // Domain registrations, looked up daily in the background by one process at a time (a lease).
      const lookups = startDomainExpiry({ sql: opts.sql, log, clock, bootstrapUrl: config.RDAP_BOOTSTRAP_URL, outbox: outbox! });
      stops.push(lookups.stop);
      domainExpiry = lookups;
    }
    if (opts.roles.includes('deadline')) {
      const deadline = await startDeadline({
        sql: opts.sql,
        nc: opts.nc,
        names,
        log,
        outbox: outbox!,
        partitions: config.PING_PARTITIONS,
        replicas: config.NATS_REPLICAS,
        metrics,
        clock,
      });
      stops.push(deadline.stop);
    }
    if (opts.roles.includes('notify')) {
      const notify = await startNotifyRole({ sql: opts.sql, log, config, keys, metrics, now, ...opts.notify });
      stops.push(notify.stop);
      // Maintenance windows start and end beside the router that holds and releases their alerts.
      const boundaries = startBoundaryWorker({ sql: opts.sql, log, clock, ...(outbox ? { outbox } : {}) });
      stops.push(boundaries.stop);
      // Status page incidents drafted from outages, as their downs and ups come through EVENTS.
      const drafter = await startIncidentDrafter({ sql: opts.sql, nc: opts.nc, names, log });
      stops.push(drafter.stop);
    }

    if (opts.roles.includes('api')) {
      app = await buildApp({
        config,
        sql: opts.sql,
        nc: opts.nc,
        log,
        keys,
        metrics,
        ...(outbox ? { outbox } : {}),
        now,
      });
      await app.listen({ port: opts.port ?? config.PORT, host: config.HOST });
      const addr = app.server.address();
      const port = addr && typeof addr === 'object' ? addr.port : config.PORT;
      const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
      url = opts.port === undefined ? config.PUBLIC_URL : `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
      const listening = app;
      stops.push(() => listening.close());
      metricsUrl = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
    }
    const withApi = opts.roles.includes('api');
    if (!withApi || metricsOnOwnPort(config)) {
      const port = withApi ? config.METRICS_PORT : (opts.port ?? config.METRICS_PORT);
      const ops = await startOpsServer({ sql: opts.sql, nc: opts.nc, metrics, log, port, host: config.HOST });
      stops.push(ops.close);
      metricsUrl = ops.url;
    }
  } catch (err) {
    await stopAll().catch(() => {});
    throw err;
  }
  log.info({ roles: opts.roles, url, metricsUrl }, 'control plane started');

  return {
    keys,
    url,
    metricsUrl: metricsUrl!,
    app,
    domainExpiry,
    async stop() {
      await stopAll();
      log.info('control plane stopped');
    },
  };
}
