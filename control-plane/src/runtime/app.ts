import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { serializerCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Config } from '../../../shared/src/config.ts';
import { healthRoutes, quietProbeLogs } from '../../../shared/src/health.ts';
import { installMethodNotAllowed, markRefusals } from '../../../shared/src/http/methods.ts';
import { serverTimeouts } from '../../../shared/src/net/server-timeouts.ts';
import { createMetrics, instrumentHttp, metricsOnOwnPort, type Metrics } from '../../../shared/src/metrics.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import { natsAlive, type NatsConnection } from '../../../shared/src/nats.ts';
import { natsNames } from '../../../shared/src/subjects.ts';
import { sqlAlive, type Sql } from '../platform/db/sql.ts';
import { createAuthenticator } from '../accounts/bearer.ts';
import { createRateLimiter } from '../../../shared/src/rate-limit.ts';
import { AppError } from '../platform/errors.ts';
import { createOutboxPublisher, type OutboxPublisher } from '../platform/outbox.ts';
import type { App, Keys } from '../platform/http/context.ts';
import { heartbeatRoutes } from '../heartbeats/routes.ts';
import { integrationRoutes } from '../notifications/integrations/routes.ts';
import { installErrorHandler } from '../platform/http/error-handler.ts';
import { installJsonParser } from '../platform/http/json-body.ts';
import { installNulGuard } from '../platform/http/nul-guard.ts';
import { registerOpenApi } from '../platform/http/openapi.ts';
import { markBearerRoutes, recordRoutes } from '../platform/http/route-table.ts';
import { validatorCompiler } from '../platform/http/validation.ts';
import { maintenanceRoutes } from '../maintenance/routes.ts';
import { statusPageRoutes } from '../status-pages/routes.ts';
import { badgeApiRoutes } from '../status-pages/badge-routes.ts';
import { statusPageIncidentRoutes } from '../status-pages/incidents/routes.ts';
import { statusPageSubscriberRoutes } from '../status-pages/subscribers/routes.ts';
import { alertRoutes } from '../alerts/routes.ts';
import { regionRoutes } from '../monitors/regions/routes.ts';
import { monitorRoutes } from '../monitors/routes.ts';
import { registerMcp } from '../mcp/index.ts';
import { pingEdgeRoutes, pingLogRoutes, pingSnoozeRoutes } from '../heartbeats/pings/routes.ts';
import { organizationRoutes, projectRoutes } from '../projects/routes.ts';
import { notifyUrlRoutes } from '../triggers/notify-url.ts';
import { triggerRoutes } from '../triggers/routes.ts';
import { registerWeb } from '../web/index.ts';

export interface AppDeps {
  config: Config;
  sql: Sql;
  nc: NatsConnection;
  log: Logger;
  keys: Keys;
  /** The process's metrics registry; one of its own by default. */
  metrics?: Metrics;
  /** The clock every rule reads; tests pass their own. */
  now?: () => Date;
  /** Publishes the events API changes cause; without one the app makes its own (with a relay). */
  outbox?: OutboxPublisher;
}

export type { App };

/** Builds the control plane's HTTP application without listening (tests use `inject` or a port). */
export async function buildApp(deps: AppDeps): Promise<App> {
  const app: App = Fastify({
    // Requests are logged through the shared serializer (shared/src/request-log.ts), 404s included.
    loggerInstance: deps.log.child({ component: 'api' }) as FastifyBaseLogger,
    logController: quietProbeLogs(),
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    bodyLimit: 1024 * 1024,
    ...serverTimeouts(deps.config),
    return503OnClosing: true,
    // Whose X-Forwarded-For names the client (sign-in throttling, trigger call records): none by default.
    trustProxy: deps.config.TRUST_PROXY,
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.addHook('onSend', async (req, reply) => {
    void reply.header('x-request-id', req.id);
  });
  recordRoutes(app);
  installMethodNotAllowed(app, {
    methodNotAllowed: (allow) => new AppError('METHOD_NOT_ALLOWED', undefined, undefined, { allow }),
    notFound: () => new AppError('NOT_FOUND'),
  });
  installErrorHandler(app);
  installJsonParser(app);
  installNulGuard(app);

  healthRoutes(app, {
    postgres: () => sqlAlive(deps.sql),
    nats: () => natsAlive(deps.nc),
  });
  instrumentHttp(app, deps.metrics ?? createMetrics(), 'api', { serve: !metricsOnOwnPort(deps.config) });
  await registerOpenApi(app, deps.config.PUBLIC_URL);

  const ctx = { config: deps.config, sql: deps.sql, nc: deps.nc, log: deps.log, keys: deps.keys, now: deps.now ?? (() => new Date()) };
  const outbox =
    deps.outbox ?? createOutboxPublisher({ sql: deps.sql, nc: deps.nc, names: natsNames(deps.config.NATS_NAMESPACE), log: deps.log });
  if (!deps.outbox) app.addHook('onClose', async () => outbox.stop());
  await app.register(async (scope: App) => {
    // The ping edge answers these itself with a 405: they are not methods of its paths.
    markRefusals(scope, ['PUT', 'PATCH', 'DELETE']);
    pingSnoozeRoutes(scope, { ...ctx, outbox });
    await pingEdgeRoutes(scope, ctx);
  });
  await app.register((scope: App) => notifyUrlRoutes(scope, { ...ctx, outbox }));
  const auth = createAuthenticator({ sql: deps.sql, log: deps.log, kind: 'api', now: ctx.now });
  const limiter = createRateLimiter({ perMinute: deps.config.API_RATE_LIMIT });
  app.addHook('onClose', () => auth.stop());
  await app.register(async (api: App) => {
    markBearerRoutes(api);
    api.addHook('onRequest', async (req) => {
      req.principal = await auth.authenticate(req);
      const wait = limiter.take(req.principal.tokenId, ctx.now().getTime());
      if (wait > 0) throw new AppError('RATE_LIMITED', undefined, undefined, { 'retry-after': String(wait) });
    });
    organizationRoutes(api, ctx);
    projectRoutes(api, ctx);
    heartbeatRoutes(api, { ...ctx, outbox });
    pingLogRoutes(api, ctx);
    monitorRoutes(api, ctx);
    regionRoutes(api, ctx);
    integrationRoutes(api, ctx);
    triggerRoutes(api, ctx);
    maintenanceRoutes(api, { ...ctx, outbox });
    statusPageRoutes(api, ctx);
    statusPageIncidentRoutes(api, ctx);
    statusPageSubscriberRoutes(api, ctx);
    badgeApiRoutes(api, ctx);
    alertRoutes(api, { ...ctx, outbox });
  });
  await registerWeb(app, { ...ctx, outbox });
  await registerMcp(app, { ...ctx, outbox });

  return app;
}
