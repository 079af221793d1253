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
 * Requests sent every few seconds by machines, logged at debug: health probes and scrapes from a
 * load balancer or Prometheus, heartbeat pings from cron jobs (`/heartbeat/...`, on the control
 * plane and on every agent's ping edge; their routes log at warn besides, see pings/edge.ts), and
 * the dashboard's live regions refreshing themselves (`?fragment=1`, every 5 s per open page).
 * Otherwise they would be most of the log.
 */
export function isRoutineRequest(url: string): boolean {
  const path = url.split(/[?#]/, 1)[0]!;
  if (path === '/healthz' || path === '/readyz' || path === '/metrics' || path.startsWith('/heartbeat/')) return true;
  return /[?&]fragment=1(&|#|$)/.test(url);
}

/** Level of a routine request's outcome: quiet when it went well, seen when it did not. */
export function routineOutcomeLevel(statusCode: number): 'debug' | 'info' | 'warn' {
  return statusCode >= 500 ? 'warn' : statusCode >= 400 ? 'info' : 'debug';
}

type Request = Parameters<LogController['incomingRequest']>[0];
type Reply = Parameters<LogController['requestCompleted']>[2];

/**
 * Request logging of every server. Routine requests (above) are logged at debug, or when they
 * fail at info (4xx: an unknown heartbeat, a rate-limited ping) and warn (5xx), with their URL
 * on the line. A route that does not exist is logged with the request (through the one request
 * serializer that redacts secrets in URLs), never with the raw URL in the message.
 */
class RequestLogs extends LogController {
  override incomingRequest(request: Request, reply: Reply): void {
    if (isRoutineRequest(request.url)) request.log.debug({ req: request }, 'incoming request');
    else super.incomingRequest(request, reply);
  }

  override requestCompleted(error: Error | null | undefined, request: Request, reply: Reply): void {
    if (error || !isRoutineRequest(request.url)) return super.requestCompleted(error, request, reply);
    const level = routineOutcomeLevel(reply.statusCode);
    reply.log[level]({ ...(level === 'debug' ? {} : { req: request }), res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }

  override routeNotFound(request: Request): void {
    if (this.isLogDisabled(request)) return;
    request.log.info({ req: request }, 'route not found');
  }
}

export function quietProbeLogs(): LogController {
  return new RequestLogs();
}
