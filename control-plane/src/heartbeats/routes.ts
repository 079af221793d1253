import { z } from 'zod';
import { principalOf } from '../accounts/bearer.ts';
import type { App } from '../platform/http/context.ts';
import { authErrors, dataEnvelope, messageEnvelope, notFoundError, validationErrors } from '../platform/http/envelopes.ts';
import { listEnvelope, PageQuery, pageMeta } from '../platform/http/pagination.ts';
import { IdParams } from '../platform/http/params.ts';
import { Heartbeat, HeartbeatCreateBody, HeartbeatListQuery, HeartbeatUpdateBody } from './schemas.ts';
import * as service from './service.ts';

export function heartbeatRoutes(app: App, ctx: service.HeartbeatContext): void {
  const tags = ['Heartbeats'];

  app.get(
    '/heartbeats',
    {
      schema: {
        tags,
        summary: 'List heartbeats (of one project, or of all your projects)',
        querystring: PageQuery.extend(HeartbeatListQuery.shape),
        response: { 200: listEnvelope(Heartbeat), ...authErrors, 422: validationErrors[422] },
      },
    },
    async (req) => {
      const { items, total } = await service.listHeartbeats(ctx, principalOf(req), req.query.project_id, req.query);
      return { data: items, meta: pageMeta(req.query, total) };
    },
  );

  app.post(
    '/heartbeats',
    {
      schema: {
        tags,
        summary: 'Create a heartbeat',
        body: HeartbeatCreateBody,
        response: { 201: messageEnvelope(Heartbeat).describe('"Heartbeat created successfully"'), ...authErrors, ...validationErrors },
      },
    },
    async (req, reply) => {
      const heartbeat = await service.createHeartbeat(ctx, principalOf(req), req.body);
      return reply.code(201).send({ message: 'Heartbeat created successfully', data: heartbeat });
    },
  );

  app.get(
    '/heartbeats/:id',
    {
      schema: {
        tags,
        summary: 'Get a heartbeat',
        params: IdParams,
        response: { 200: dataEnvelope(Heartbeat), ...authErrors, ...notFoundError },
      },
    },
    async (req) => ({ data: await service.getHeartbeat(ctx, principalOf(req), req.params.id) }),
  );

  app.patch(
    '/heartbeats/:id',
    {
      schema: {
        tags,
        summary: 'Update a heartbeat (fields sent change; project_id is ignored)',
        params: IdParams,
        body: HeartbeatUpdateBody,
        response: {
          200: messageEnvelope(Heartbeat).describe('"Heartbeat updated successfully"'),
          ...authErrors,
          ...notFoundError,
          ...validationErrors,
        },
      },
    },
    async (req) => ({
      message: 'Heartbeat updated successfully',
      data: await service.updateHeartbeat(ctx, principalOf(req), req.params.id, req.body),
    }),
  );

  app.delete(
    '/heartbeats/:id',
    {
      schema: {
        tags,
        summary: 'Delete a heartbeat (extension)',
        params: IdParams,
        response: { 204: z.null().describe('Deleted'), ...authErrors, ...notFoundError },
      },
    },
    async (req, reply) => {
      await service.deleteHeartbeat(ctx, principalOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );
}
