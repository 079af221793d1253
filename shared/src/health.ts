import { LogController, type FastifyInstance } from 'fastify';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any type provider and logger
export type AnyFastify = FastifyInstance<any, any, any, any, any>;

export type ReadinessCheck = () => Promise<boolean>;

/**
 * `/healthz`: the process is alive. `/readyz`: every dependency answers; 503 otherwise, so a
 * load balancer stops sending traffic to a process that cannot serve it.
 */
export function healthRoutes(app: AnyFastify, checks: Record<string, ReadinessCheck>): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
    const names = Object.keys(checks);
    const results = await Promise.all(names.map((n) => checks[n]!().catch(() => false)));
    const status = Object.fromEntries(names.map((n, i) => [n, results[i] ? 'ok' : 'unavailable']));
    const ready = results.every(Boolean);
    return reply
      .code(ready ? 200 : 503)
      .send(ready ? { status: 'ready', checks: status } : { message: 'Not ready', status: 'unavailable', checks: status });
  });
}

/** Request logging, less the health probes a load balancer sends every few seconds. */
export function quietProbeLogs(): LogController {
  return new LogController({ disableRequestLogging: (req) => req.url === '/healthz' || req.url === '/readyz' });
}
