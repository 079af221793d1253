import { z } from 'zod';
import { principalOf } from '../accounts/bearer.ts';
import type { App } from '../platform/http/context.ts';
import { authErrors, dataEnvelope, messageEnvelope, notFoundError, validationErrors } from '../platform/http/envelopes.ts';
import { listEnvelope, PageQuery, pageMeta } from '../platform/http/pagination.ts';
import { IdParams } from '../platform/http/params.ts';
import { MaintenanceWindow, MaintenanceWindowCreateBody, MaintenanceWindowListQuery, MaintenanceWindowUpdateBody } from './schemas.ts';
import * as service from './service.ts';

export function maintenanceRoutes(app: App, ctx: service.MaintenanceContext): void {
  const tags = ['Maintenance windows'];

  app.get(
    '/maintenance-windows',
    {
      schema: {
        tags,
        summary: 'List maintenance windows (of one project, or of all your projects)',
        querystring: PageQuery.extend(MaintenanceWindowListQuery.shape),
        response: { 200: listEnvelope(MaintenanceWindow), ...authErrors, 422: validationErrors[422] },
      },
    },
    async (req) => {
      const { items, total } = await service.listWindows(ctx, principalOf(req), req.query.project_id, req.query);
      return { data: items, meta: pageMeta(req.query, total) };
    },
  );

  app.post(
    '/maintenance-windows',
    {
      schema: {
        tags,
        summary: 'Create a maintenance window (one-off: starts_at and ends_at; recurring: cron, duration_seconds and timezone)',
        body: MaintenanceWindowCreateBody,
        response: {
          201: messageEnvelope(MaintenanceWindow).describe('"Maintenance window created successfully"'),
          ...authErrors,
          ...validationErrors,
        },
      },
    },
    async (req, reply) => {
      const data = await service.createWindow(ctx, principalOf(req), req.body);
      return reply.code(201).send({ message: 'Maintenance window created successfully', data });
    },
  );

  app.get(
    '/maintenance-windows/:id',
    {
      schema: {
        tags,
        summary: 'Get a maintenance window',
        params: IdParams,
        response: { 200: dataEnvelope(MaintenanceWindow), ...authErrors, ...notFoundError },
      },
    },
    async (req) => ({ data: await service.getWindow(ctx, principalOf(req), req.params.id) }),
  );

  app.patch(
    '/maintenance-windows/:id',
    {
      schema: {
        tags,
        summary: 'Update a maintenance window (fields sent are replaced; a run in progress goes on while the window still covers now)',
        params: IdParams,
        body: MaintenanceWindowUpdateBody,
        response: {
          200: messageEnvelope(MaintenanceWindow).describe('"Maintenance window updated successfully"'),
          ...authErrors,
          ...notFoundError,
          ...validationErrors,
        },
      },
    },
    async (req) => ({
      message: 'Maintenance window updated successfully',
      data: await service.updateWindow(ctx, principalOf(req), req.params.id, req.body),
    }),
  );

  app.delete(
    '/maintenance-windows/:id',
    {
      schema: {
        tags,
        summary: 'Delete a maintenance window (one in progress ends now)',
        params: IdParams,
        response: { 204: z.null().describe('Deleted'), ...authErrors, ...notFoundError },
      },
    },
    async (req, reply) => {
      await service.deleteWindow(ctx, principalOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );
}
