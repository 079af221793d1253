import { registerPingEdge } from '../../../../shared/src/pings/edge.ts';
import { natsNames } from '../../../../shared/src/subjects.ts';
import { principalOf } from '../../accounts/bearer.ts';
import type { ApiContext, App } from '../../platform/http/context.ts';
import { authErrors, notFoundError, validationErrors } from '../../platform/http/envelopes.ts';
import { listEnvelope, PageQuery, pageMeta } from '../../platform/http/pagination.ts';
import { IdParams } from '../../platform/http/params.ts';
import { existingHeartbeats } from './repo.ts';
import { PingLogEntry } from './schemas.ts';
import * as service from './service.ts';

/** `GET /heartbeats/{id}/pings`: the ping log, newest first (authenticated). */
export function pingLogRoutes(app: App, ctx: ApiContext): void {
  app.get(
    '/heartbeats/:id/pings',
    {
      schema: {
        tags: ['Heartbeats'],
        summary: 'List the pings a heartbeat received, newest first (extension; the last 100 are kept)',
        params: IdParams,
        querystring: PageQuery,
        response: { 200: listEnvelope(PingLogEntry), ...authErrors, ...notFoundError, 422: validationErrors[422] },
      },
    },
    async (req) => {
      const { items, total } = await service.listPings(ctx, principalOf(req), req.params.id, req.query);
      return { data: items, meta: pageMeta(req.query, total) };
    },
  );
}

/**
 * The control plane's own ping URLs (no authentication). Ids are checked in Postgres, the truth,
 * so a heartbeat takes pings from the moment it is created and none once deleted; the edge asks
 * for the ids of many pings in one query. Regional edges use KV `heartbeats`.
 */
export function pingEdgeRoutes(app: App, ctx: ApiContext): Promise<void> {
  return registerPingEdge(app, {
    nc: ctx.nc,
    names: natsNames(ctx.config.NATS_NAMESPACE),
    region: null,
    partitions: ctx.config.PING_PARTITIONS,
    lookup: (ids) => existingHeartbeats(ctx.sql, ids),
    now: ctx.now,
    perHeartbeatPerMinute: ctx.config.PING_RATE_LIMIT,
  });
}
