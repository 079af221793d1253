import Fastify, { type FastifyBaseLogger } from 'fastify';
import { healthRoutes, quietProbeLogs } from '../../../shared/src/health.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import { instrumentHttp, type Metrics } from '../../../shared/src/metrics.ts';
import { natsAlive, type NatsConnection } from '../../../shared/src/nats.ts';
import { sqlAlive, type Sql } from '../platform/db/sql.ts';

export interface OpsServer {
  /** Where /healthz, /readyz and /metrics answer. */
  url: string;
  close(): Promise<void>;
}

/**
 * /healthz, /readyz and /metrics of a control-plane process that does not run the api role, so
 * that every process can be probed and scraped. Nothing else is served here.
 */
export async function startOpsServer(opts: {
  sql: Sql;
  nc: NatsConnection;
  metrics: Metrics;
  log: Logger;
  port: number;
  host: string;
}): Promise<OpsServer> {
  const app = Fastify({
    loggerInstance: opts.log.child({ component: 'ops-http' }) as FastifyBaseLogger,
    logController: quietProbeLogs(),
    // Probes and scrapes are small GETs; a client that holds a connection open gets nothing more.
    requestTimeout: 10_000,
    connectionTimeout: 30_000,
  });
  healthRoutes(app, {
    postgres: () => sqlAlive(opts.sql),
    nats: () => natsAlive(opts.nc),
  });
  instrumentHttp(app, opts.metrics, 'ops');
  try {
    await app.listen({ port: opts.port, host: opts.host });
  } catch (err) {
    await app.close();
    throw err;
  }
  const addr = app.server.address();
  const port = addr && typeof addr === 'object' ? addr.port : opts.port;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host === '0.0.0.0' ? '127.0.0.1' : opts.host;
  return { url: `http://${host}:${port}`, close: () => app.close() };
}
