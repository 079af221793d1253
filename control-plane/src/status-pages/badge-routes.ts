import { z } from 'zod';
import { principalOf } from '../accounts/bearer.ts';
import type { ApiContext, App } from '../platform/http/context.ts';
import { authErrors, dataEnvelope, messageEnvelope, notFoundError } from '../platform/http/envelopes.ts';
import { IdParams } from '../platform/http/params.ts';
import { ensureBadge, getBadge, PublicBadge, removeBadge } from './badge-resource.ts';
import type { BadgeSubject } from './badges-repo.ts';

/** `/monitors/{id}/badge` and `/heartbeats/{id}/badge` (extension, ADR 0037): what the dashboard's "Public badges" card does. */
export function badgeApiRoutes(app: App, ctx: ApiContext): void {
  for (const type of ['monitor', 'heartbeat'] as const) {
    const tags = [type === 'monitor' ? 'Monitors' : 'Heartbeats'];
    const subject = (id: string): BadgeSubject => (type === 'monitor' ? { monitorId: id } : { heartbeatId: id });

    app.get(
      `/${type}s/:id/badge`,
      {
        schema: {
          tags,
          summary: `Get the public badge of a ${type}: its secret address and the URLs of each badge; 404 when it has none (extension)`,
          params: IdParams,
          response: { 200: dataEnvelope(PublicBadge), ...authErrors, ...notFoundError },
        },
      },
      async (req) => ({ data: await getBadge(ctx, principalOf(req), subject(req.params.id)) }),
    );

    app.post(
      `/${type}s/:id/badge`,
      {
        schema: {
          tags,
          summary: `Create the public badge of a ${type} at a new secret address; when it has one already, that one is returned (200) (extension)`,
          params: IdParams,
          response: {
            200: messageEnvelope(PublicBadge).describe('"Badge already exists"'),
            201: messageEnvelope(PublicBadge).describe('"Badge created successfully"'),
            ...authErrors,
            ...notFoundError,
          },
        },
      },
      async (req, reply) => {
        const { badge, created } = await ensureBadge(ctx, principalOf(req), subject(req.params.id));
        return reply
          .code(created ? 201 : 200)
          .send({ message: created ? 'Badge created successfully' : 'Badge already exists', data: badge });
      },
    );

    app.delete(
      `/${type}s/:id/badge`,
      {
        schema: {
          tags,
          summary: `Remove the public badge of a ${type}: its addresses stop working (extension)`,
          params: IdParams,
          response: { 204: z.null().describe('Deleted'), ...authErrors, ...notFoundError },
        },
      },
      async (req, reply) => {
        await removeBadge(ctx, principalOf(req), subject(req.params.id));
        return reply.code(204).send(null);
      },
    );
  }
}
