import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { Config } from '../../shared/src/config.ts';
import { healthRoutes, quietProbeLogs, type AnyFastify } from '../../shared/src/health.ts';
import { installMethodNotAllowed, markRefusals, methodNotAllowedError } from '../../shared/src/http/methods.ts';
import type { Logger } from '../../shared/src/logger.ts';
import { instrumentHttp, type Metrics } from '../../shared/src/metrics.ts';
import { natsAlive, type NatsConnection } from '../../shared/src/nats.ts';
import { serverTimeouts } from '../../shared/src/net/server-timeouts.ts';
import { registerPingEdge } from '../../shared/src/pings/edge.ts';
import { openBucket } from '../../shared/src/provision.ts';
import type { Names } from '../../shared/src/subjects.ts';

export interface PingEdge {
  /** Where the region's heartbeat ping URLs answer. */
  url: string;
  stop(): Promise<void>;
}

/**
 * The regional ping edge: heartbeat ping URLs served next to the agent, checked against KV
 * `heartbeats` and published straight into PINGS, so a region's cron jobs report without a
 * round trip to the control plane's region (and without Postgres).
 */
export async function startPingEdge(opts: {
  config: Config;
  nc: NatsConnection;
  names: Names;
  region: string;
  log: Logger;
  metrics: Metrics;
  port: number;
  host: string;
}): Promise<PingEdge> {
  const app = Fastify({
    loggerInstance: opts.log.child({ component: 'ping-edge' }) as FastifyBaseLogger,
    logController: quietProbeLogs(),
    bodyLimit: 1024 * 1024,
    ...serverTimeouts(opts.config),
  });
  installMethodNotAllowed(app, { methodNotAllowed: methodNotAllowedError });
  healthRoutes(app, { nats: () => natsAlive(opts.nc) });
  // The edge is published to the world; the agent's own port (AGENT_PORT) serves the same registry.
  instrumentHttp(app, opts.metrics, 'ping-edge', { serve: false });
  const heartbeats = await openBucket(opts.nc, opts.names, 'heartbeats', { replicas: opts.config.NATS_REPLICAS });
  await app.register(async (scope: AnyFastify) => {
    // The edge answers these itself with a 405: they are not methods of its paths.
    markRefusals(scope, ['PUT', 'PATCH', 'DELETE']);
    await registerPingEdge(scope, {
      nc: opts.nc,
      names: opts.names,
      region: opts.region,
      partitions: opts.config.PING_PARTITIONS,
      heartbeats,
      perHeartbeatPerMinute: opts.config.PING_RATE_LIMIT,
      bodyLimit: opts.config.PING_BODY_LIMIT,
    });
  });
  await app.listen({ port: opts.port, host: opts.host });
  const addr = app.server.address();
  const url = `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${addr && typeof addr === 'object' ? addr.port : opts.port}`;
  opts.log.info({ url }, 'ping edge listening');
  return { url, stop: () => app.close() };
}
