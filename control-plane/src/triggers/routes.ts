import { z } from 'zod';
import { principalOf } from '../accounts/bearer.ts';
import type { ApiContext, App } from '../platform/http/context.ts';
import { authErrors, dataEnvelope, messageEnvelope, notFoundError, validationErrors } from '../platform/http/envelopes.ts';
import { listEnvelope, PageQuery, pageMeta } from '../platform/http/pagination.ts';
import { IdParams } from '../platform/http/params.ts';
import { Trigger, TriggerCreateBody, TriggerEventView, TriggerListQuery, TriggerUpdateBody, TriggerWithToken } from './schemas.ts';
import * as service from './service.ts';

export function triggerRoutes(app: App, ctx: ApiContext): void {
  const tags = ['Triggers'];

  app.get(
    '/triggers',
    {
      schema: {
        tags,
        summary: 'List notification triggers (of one project, or of all your projects)',
        querystring: PageQuery.extend(TriggerListQuery.shape),
        response: { 200: listEnvelope(Trigger), ...authErrors, 422: validationErrors[422] },
      },
    },
    async (req) => {
      const { items, total } = await service.listTriggers(ctx, principalOf(req), req.query.project_id, req.query);
      return { data: items, meta: pageMeta(req.query, total) };
    },
  );

  app.post(
    '/triggers',
    {
      schema: {
        tags,
        summary: 'Create a notification trigger (a protected one answers with its token, once)',
        body: TriggerCreateBody,
        response: {
          201: messageEnvelope(z.union([TriggerWithToken, Trigger])).describe('"Trigger created successfully"'),
          ...authErrors,
          ...validationErrors,
        },
      },
    },
    async (req, reply) => {
      const trigger = await service.createTrigger(ctx, principalOf(req), req.body);
      return reply.code(201).send({ message: 'Trigger created successfully', data: trigger });
    },
  );

  app.get(
    '/triggers/:id',
    {
      schema: {
        tags,
        summary: 'Get a notification trigger',
        params: IdParams,
        response: { 200: dataEnvelope(Trigger), ...authErrors, ...notFoundError },
      },
    },
    async (req) => ({ data: await service.getTrigger(ctx, principalOf(req), req.params.id) }),
  );

  app.patch(
    '/triggers/:id',
    {
      schema: {
        tags,
        summary: 'Update a notification trigger (fields sent change; project_id is ignored)',
        params: IdParams,
        body: TriggerUpdateBody,
        response: {
          200: messageEnvelope(Trigger).describe('"Trigger updated successfully"'),
          ...authErrors,
          ...notFoundError,
          ...validationErrors,
        },
      },
    },
    async (req) => ({
      message: 'Trigger updated successfully',
      data: await service.updateTrigger(ctx, principalOf(req), req.params.id, req.body),
    }),
  );

  app.delete(
    '/triggers/:id',
    {
      schema: {
        tags,
        summary: 'Delete a notification trigger',
        params: IdParams,
        response: { 204: z.null().describe('Deleted'), ...authErrors, ...notFoundError },
      },
    },
    async (req, reply) => {
      await service.deleteTrigger(ctx, principalOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/triggers/:id/token',
    {
      schema: {
        tags,
        summary: 'Generate a new token (shown once; the old one stops working at once)',
        params: IdParams,
        response: { 200: messageEnvelope(TriggerWithToken).describe('"Trigger token generated"'), ...authErrors, ...notFoundError },
      },
    },
    async (req) => ({ message: 'Trigger token generated', data: await service.regenerateToken(ctx, principalOf(req), req.params.id) }),
  );

  app.get(
    '/triggers/:id/events',
    {
      schema: {
        tags,
        summary: 'Calls of the trigger, newest first, each with its deliveries',
        params: IdParams,
        querystring: PageQuery,
        response: { 200: listEnvelope(TriggerEventView), ...authErrors, ...notFoundError, 422: validationErrors[422] },
      },
    },
    async (req) => {
      const { items, total } = await service.listEvents(ctx, principalOf(req), req.params.id, req.query);
      return { data: items, meta: pageMeta(req.query, total) };
    },
  );
}
