import Fastify, { type FastifyBaseLogger } from 'fastify';
import { healthRoutes, quietProbeLogs } from '../../../shared/src/health.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import { instrumentHttp, type Metrics } from '../../../shared/src/metrics.ts';
import { natsAlive, type NatsConnection } from '../../../shared/src/nats.ts';

export type OpsServer = {
  /** Where /healthz, /readyz and /metrics answer. */
  url: string;
  close(): Promise<void>;
};

/** The agent's own HTTP port: health for its orchestrator, metrics for Prometheus. */
export async function startOpsServer(opts: {
  log: Logger;
  nc: NatsConnection;
  metrics: Metrics;
  port: number;
  host: string;
}): Promise<OpsServer> {
  const app = Fastify({ loggerInstance: opts.log as FastifyBaseLogger, logController: quietProbeLogs() });
  try {
    healthRoutes(app, { nats: () => natsAlive(opts.nc) });
    instrumentHttp(app, opts.metrics, 'agent');
    await app.listen({ port: opts.port, host: opts.host });
  } catch (err) {
    await app.close();
    throw err;
  }
  const addr = app.server.address();
  const url = `http://${opts.host}:${addr && typeof addr === 'object' ? addr.port : opts.port}`;
  return { url, close: () => app.close() };
}
