import { z } from 'zod';
import { principalOf } from '../accounts/bearer.ts';
import type { ApiContext, App } from '../platform/http/context.ts';
import { authErrors, dataEnvelope, messageEnvelope, notFoundError, validationErrors } from '../platform/http/envelopes.ts';
import { listEnvelope, PageQuery, pageMeta } from '../platform/http/pagination.ts';
import { IdParams } from '../platform/http/params.ts';
import { StatusPage, StatusPageCreateBody, StatusPageListQuery, StatusPageUpdateBody } from './schemas.ts';
import * as service from './service.ts';

export function statusPageRoutes(app: App, ctx: ApiContext): void {
  const tags = ['Status pages'];

  app.get(
    '/status-pages',
    {
      schema: {
        tags,
        summary: 'List status pages (of one project, or of all your projects)',
        querystring: PageQuery.extend(StatusPageListQuery.shape),
        response: { 200: listEnvelope(StatusPage), ...authErrors, 422: validationErrors[422] },
      },
    },
    async (req) => {
      const { items, total } = await service.listStatusPages(ctx, principalOf(req), req.query.project_id, req.query);
      return { data: items, meta: pageMeta(req.query, total) };
    },
  );

  app.post(
    '/status-pages',
    {
      schema: {
        tags,
        summary: 'Create a status page (public at once, at a random address), with groups of the project’s monitors and heartbeats',
        body: StatusPageCreateBody,
        response: {
          201: messageEnvelope(StatusPage).describe('"Status page created successfully"'),
          ...authErrors,
          ...validationErrors,
        },
      },
    },
    async (req, reply) => {
      const data = await service.createStatusPage(ctx, principalOf(req), req.body);
      return reply.code(201).send({ message: 'Status page created successfully', data });
    },
  );

  app.get(
    '/status-pages/:id',
    {
      schema: {
        tags,
        summary: 'Get a status page, with its components’ statuses and its banner',
        params: IdParams,
        response: { 200: dataEnvelope(StatusPage), ...authErrors, ...notFoundError },
      },
    },
    async (req) => ({ data: await service.getStatusPage(ctx, principalOf(req), req.params.id) }),
  );

  app.patch(
    '/status-pages/:id',
    {
      schema: {
        tags,
        summary: 'Update a status page (fields sent are replaced; groups, when sent, replace every group)',
        params: IdParams,
        body: StatusPageUpdateBody,
        response: {
          200: messageEnvelope(StatusPage).describe('"Status page updated successfully"'),
          ...authErrors,
          ...notFoundError,
          ...validationErrors,
        },
      },
    },
    async (req) => ({
      message: 'Status page updated successfully',
      data: await service.updateStatusPage(ctx, principalOf(req), req.params.id, req.body),
    }),
  );

  app.delete(
    '/status-pages/:id',
    {
      schema: {
        tags,
        summary: 'Delete a status page (its address stops working)',
        params: IdParams,
        response: { 204: z.null().describe('Deleted'), ...authErrors, ...notFoundError },
      },
    },
    async (req, reply) => {
      await service.deleteStatusPage(ctx, principalOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/status-pages/:id/address',
    {
      schema: {
        tags,
        summary: 'Give a status page a new random address (the old one stops working at once)',
        params: IdParams,
        response: {
          200: messageEnvelope(StatusPage).describe('"Status page address changed successfully"'),
          ...authErrors,
          ...notFoundError,
        },
      },
    },
    async (req) => ({
      message: 'Status page address changed successfully',
      data: await service.changeStatusPageAddress(ctx, principalOf(req), req.params.id),
    }),
  );
}
