import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { verifyLink } from '../../alerts/links.ts';
import { snoozeSubject, type AlertsContext } from '../../alerts/service.ts';
import { AppError } from '../../platform/errors.ts';
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
    bodyLimit: ctx.config.PING_BODY_LIMIT,
  });
}

/**
 * `<ping URL>/snooze?minutes=N&sig=...` (GET or POST, no sign-in; the signature, shown on the
 * heartbeat as `snooze_url`, is the credential): snoozes the heartbeat for N minutes (1 to 10,080;
 * 0 ends the snooze), so a job can quiet its own alerts around planned work. Served by the control
 * plane only: a regional edge has no database to write it to.
 */
export function pingSnoozeRoutes(app: App, ctx: AlertsContext): void {
  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const id = (req.params as { id: string }).id;
    const query = req.query as Record<string, unknown>;
    const text = (status: number, body: string) =>
      reply.code(status).header('content-type', 'text/plain; charset=utf-8').header('cache-control', 'no-store').send(`${body}\n`);
    if (!z.uuid().safeParse(id).success || !verifyLink(ctx.keys.alertLinks, 'heartbeat-snooze', id, query.sig))
      return text(404, 'Not found');
    const raw = typeof query.minutes === 'string' ? query.minutes : '60';
    if (!/^\d{1,5}$/.test(raw)) return text(422, 'minutes must be a whole number from 0 to 10080');
    const minutes = Number(raw);
    const [row] = await ctx.sql<{ project_id: string }[]>`select project_id from heartbeats where id = ${id}`;
    if (!row) return text(404, 'Not found');
    try {
      const s = await snoozeSubject(ctx, { type: 'heartbeat', id }, [row.project_id], minutes === 0 ? null : minutes, { via: 'link' });
      return text(200, s.snoozed_until ? `Snoozed until ${s.snoozed_until}` : 'Not snoozed');
    } catch (err) {
      if (err instanceof AppError && err.code === 'VALIDATION') return text(422, 'minutes must be a whole number from 0 to 10080');
      throw err;
    }
  };
  app.get('/heartbeat/:id/snooze', { schema: { hide: true } }, handler);
  app.post('/heartbeat/:id/snooze', { schema: { hide: true } }, handler);
}
