import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AnyFastify } from './health.ts';

/**
 * The Prometheus metrics of one process, on one registry. A process that runs the control
 * plane and an agent (the embedded default) shares it, and both ports serve it at /metrics.
 * Names: docs/operations.md lists what to alert on.
 */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'uptime_' });
  // prom-client's totals of active handles, requests and resources are gauges named `_total`,
  // which Prometheus reads as counters; the same counts by type remain (`uptime_nodejs_active_handles` ...).
  for (const kind of ['handles', 'requests', 'resources']) registry.removeSingleMetric(`uptime_nodejs_active_${kind}_total`);
  const r = [registry];
  return {
    registry,
    httpRequests: new Counter({
      name: 'uptime_http_requests_total',
      help: 'HTTP requests answered, by route pattern, method and status.',
      labelNames: ['server', 'route', 'method', 'status'] as const,
      registers: r,
    }),
    httpDuration: new Histogram({
      name: 'uptime_http_request_duration_seconds',
      help: 'Time to answer an HTTP request.',
      labelNames: ['server', 'route', 'method'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: r,
    }),
    checks: new Counter({
      name: 'uptime_checks_total',
      help: 'Checks run by this agent, by region and outcome.',
      labelNames: ['region', 'outcome'] as const,
      registers: r,
    }),
    checkDuration: new Histogram({
      name: 'uptime_check_duration_seconds',
      help: 'Total time of a check (all redirect hops).',
      labelNames: ['region'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: r,
    }),
    scheduleLateness: new Histogram({
      name: 'uptime_schedule_lateness_seconds',
      help: 'How late a check started after its slot.',
      labelNames: ['region'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers: r,
    }),
    deadlineLateness: new Histogram({
      name: 'uptime_deadline_lateness_seconds',
      help: 'How late a heartbeat deadline fired after it came due.',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: r,
    }),
    notifyDeliveries: new Counter({
      name: 'uptime_notify_deliveries_total',
      help: 'Notification delivery attempts, by channel and outcome: delivered, retried (failed, tried again later) or dead (given up).',
      labelNames: ['channel', 'status'] as const,
      registers: r,
    }),
    /**
     * A gauge read when scraped: a level that goes up and down. Registering a name again replaces
     * the earlier gauge, so a role started again in the same process reports its new state.
     */
    gauge(name: string, help: string, collect: () => number | Promise<number>): Gauge {
      assertGaugeName(name);
      registry.removeSingleMetric(name);
      return new Gauge({
        name,
        help,
        registers: r,
        async collect() {
          this.set(await collect());
        },
      });
    },
    /**
     * A counter read when scraped from a running total the component keeps (results published,
     * stored, ...). Prometheus takes a smaller value as a restart, so a role started again in the
     * same process, whose total starts from 0, replaces the earlier counter under the same name.
     */
    counter(name: string, help: string, total: () => number): Counter {
      if (!name.endsWith('_total')) throw new Error(`counter ${name}: a counter's name ends in _total`);
      registry.removeSingleMetric(name);
      return new Counter({
        name,
        help,
        registers: r,
        collect() {
          this.reset();
          this.inc(total());
        },
      });
    },
    /** A gauge with labels, read when scraped: one series per entry `collect` returns. */
    labeledGauge<L extends string>(
      name: string,
      help: string,
      labelNames: readonly L[],
      collect: () => Iterable<{ labels: Record<L, string | number>; value: number }>,
    ): Gauge<L> {
      assertGaugeName(name);
      registry.removeSingleMetric(name);
      return new Gauge<L>({
        name,
        help,
        labelNames,
        registers: r,
        collect() {
          this.reset();
          for (const { labels, value } of collect()) this.set(labels, value);
        },
      });
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** Prometheus reads a `_total` name as a counter: a total since start is a counter, not a gauge. */
function assertGaugeName(name: string): void {
  if (name.endsWith('_total')) throw new Error(`gauge ${name}: a name ending in _total is a counter's`);
}

/**
 * A control-plane process whose METRICS_PORT is set apart from PORT serves /metrics only there: the
 * API port is the one published to the world, the metrics port stays inside.
 */
export function metricsOnOwnPort(config: { PORT: number; METRICS_PORT: number }): boolean {
  return config.METRICS_PORT !== config.PORT;
}

/**
 * Counts and times every request by its route pattern, and serves the registry at /metrics unless
 * `serve` is false (a port open to the world: the API beside a METRICS_PORT, a ping edge).
 */
export function instrumentHttp(app: AnyFastify, metrics: Metrics, server: string, opts: { serve?: boolean } = {}): void {
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    metrics.httpRequests.inc({ server, route, method: req.method, status: String(reply.statusCode) });
    metrics.httpDuration.observe({ server, route, method: req.method }, reply.elapsedTime / 1000);
  });
  if (opts.serve === false) return;
  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
}
