import { z } from 'zod';
import { principalOf } from '../accounts/bearer.ts';
import type { ApiContext, App } from '../platform/http/context.ts';
import { authErrors, dataEnvelope, MessageBody, messageEnvelope, notFoundError, validationErrors } from '../platform/http/envelopes.ts';
import { listEnvelope, PageQuery, pageMeta } from '../platform/http/pagination.ts';
import { IdParams } from '../platform/http/params.ts';
import { monitorIncidents, monitorResults } from './history.ts';
import { CheckResultView, IncidentView, Monitor, MonitorCreateBody, MonitorListQuery, MonitorUpdateBody, ResultsQuery } from './schemas.ts';
import { CheckTestView, MonitorTestBody, MonitorTestQuery, testDraft, testSaved } from './check-test.ts';
import * as service from './service.ts';

export function monitorRoutes(app: App, ctx: ApiContext): void {
  const tags = ['Monitors'];

  app.get(
    '/monitors',
    {
      schema: {
        tags,
        summary: 'List monitors (of one project, or of all your projects; with `tag`, those carrying it)',
        querystring: PageQuery.extend(MonitorListQuery.shape),
        response: { 200: listEnvelope(Monitor), ...authErrors, 422: validationErrors[422] },
      },
    },
    async (req) => {
      const { items, total } = await service.listMonitors(ctx, principalOf(req), req.query.project_id, req.query, { tag: req.query.tag });
      return { data: items, meta: pageMeta(req.query, total) };
    },
  );

  app.post(
    '/monitors',
    {
      schema: {
        tags,
        summary: 'Create a monitor',
        body: MonitorCreateBody,
        response: { 201: messageEnvelope(Monitor).describe('"Monitor created successfully"'), ...authErrors, ...validationErrors },
      },
    },
    async (req, reply) => {
      const monitor = await service.createMonitor(ctx, principalOf(req), req.body);
      return reply.code(201).send({ message: 'Monitor created successfully', data: monitor });
    },
  );

  app.get(
    '/monitors/:id',
    {
      schema: {
        tags,
        summary: 'Get a monitor',
        params: IdParams,
        response: { 200: dataEnvelope(Monitor), ...authErrors, ...notFoundError },
      },
    },
    async (req) => ({ data: await service.getMonitor(ctx, principalOf(req), req.params.id) }),
  );

  app.put(
    '/monitors/:id',
    {
      schema: {
        tags,
        summary: 'Update a monitor (fields sent are replaced; project_id is ignored)',
        params: IdParams,
        body: MonitorUpdateBody,
        response: {
          200: messageEnvelope(Monitor).describe('"Monitor updated successfully"'),
          ...authErrors,
          ...notFoundError,
          ...validationErrors,
        },
      },
    },
    async (req) => ({
      message: 'Monitor updated successfully',
      data: await service.updateMonitor(ctx, principalOf(req), req.params.id, req.body),
    }),
  );

  app.delete(
    '/monitors/:id',
    {
      schema: {
        tags,
        summary: 'Delete a monitor (extension)',
        params: IdParams,
        response: { 204: z.null().describe('Deleted'), ...authErrors, ...notFoundError },
      },
    },
    async (req, reply) => {
      await service.deleteMonitor(ctx, principalOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/monitors/:id/results',
    {
      schema: {
        tags,
        summary: 'Recent checks of a monitor, newest first (extension)',
        params: IdParams,
        querystring: PageQuery.extend(ResultsQuery.shape),
        response: { 200: listEnvelope(CheckResultView), ...authErrors, ...notFoundError, 422: validationErrors[422] },
      },
    },
    async (req) => {
      const { items, total } = await monitorResults(ctx, principalOf(req), req.params.id, req.query.region, req.query);
      return { data: items, meta: pageMeta(req.query, total) };
    },
  );

  const testErrors = {
    429: MessageBody.describe('Too many tests; Retry-After says in how many seconds to try again.'),
    503: MessageBody.describe('No probe agent of the region is connected, or none answered in time.'),
  } as const;

  app.post(
    '/monitor-tests',
    {
      schema: {
        tags,
        summary: "Test a monitor before saving it: one check by an agent, with every assertion's outcome (extension)",
        description:
          'Takes the body of a create (and a `region`), runs the check once from that region (any region with an agent when left out), without the re-check of a failure, and answers with what it saw. Nothing is stored, published or alerted.',
        body: MonitorTestBody,
        response: { 200: dataEnvelope(CheckTestView), ...authErrors, ...validationErrors, ...testErrors },
      },
    },
    async (req) => ({ data: await testDraft(ctx, principalOf(req), req.body) }),
  );

  app.post(
    '/monitors/:id/test',
    {
      schema: {
        tags,
        summary: "Test a saved monitor now: one check by an agent, with every assertion's outcome (extension)",
        params: IdParams,
        querystring: MonitorTestQuery,
        response: {
          200: dataEnvelope(CheckTestView),
          ...authErrors,
          ...notFoundError,
          409: MessageBody,
          422: validationErrors[422],
          ...testErrors,
        },
      },
    },
    async (req) => ({ data: await testSaved(ctx, principalOf(req), req.params.id, req.query.region) }),
  );

  app.get(
    '/monitors/:id/incidents',
    {
      schema: {
        tags,
        summary: 'Incidents of a monitor, newest first (extension)',
        params: IdParams,
        querystring: PageQuery,
        response: { 200: listEnvelope(IncidentView), ...authErrors, ...notFoundError, 422: validationErrors[422] },
      },
    },
    async (req) => {
      const { items, total } = await monitorIncidents(ctx, principalOf(req), req.params.id, req.query);
      return { data: items, meta: pageMeta(req.query, total) };
    },
  );
}
