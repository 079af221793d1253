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

/**
 * Request logging of every server, less the health probes a load balancer sends every few
 * seconds. A route that does not exist is logged with the request (through the one request
 * serializer that redacts secrets in URLs), never with the raw URL in the message.
 */
class RequestLogs extends LogController {
  override routeNotFound(request: Parameters<LogController['routeNotFound']>[0]): void {
    if (this.isLogDisabled(request)) return;
    request.log.info({ req: request }, 'route not found');
  }
}

export function quietProbeLogs(): LogController {
  return new RequestLogs({ disableRequestLogging: (req) => req.url === '/healthz' || req.url === '/readyz' });
}
