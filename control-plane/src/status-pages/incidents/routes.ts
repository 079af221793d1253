import { z } from 'zod';
import { principalOf } from '../../accounts/bearer.ts';
import type { ApiContext, App } from '../../platform/http/context.ts';
import { authErrors, dataEnvelope, messageEnvelope, notFoundError, validationErrors } from '../../platform/http/envelopes.ts';
import { listEnvelope, PageQuery, pageMeta } from '../../platform/http/pagination.ts';
import { IdParams } from '../../platform/http/params.ts';
import {
  IncidentListQuery,
  IncidentParams,
  IncidentUpdatePostBody,
  StatusPageIncident,
  StatusPageIncidentCreateBody,
  StatusPageIncidentUpdateBody,
} from './schemas.ts';
import * as service from './service.ts';

/** The incidents of a status page (an extension of the API): a thin adapter over incidents/service.ts. */
export function statusPageIncidentRoutes(app: App, ctx: ApiContext): void {
  const tags = ['Status pages'];

  app.get(
    '/status-pages/:id/incidents',
    {
      schema: {
        tags,
        summary: 'List the incidents of a status page, drafts included, newest first (extension)',
        params: IdParams,
        querystring: PageQuery.extend(IncidentListQuery.shape),
        response: { 200: listEnvelope(StatusPageIncident), ...authErrors, ...notFoundError, 422: validationErrors[422] },
      },
    },
    async (req) => {
      const { items, total } = await service.listIncidents(ctx, principalOf(req), req.params.id, req.query, req.query);
      return { data: items, meta: pageMeta(req.query, total) };
    },
  );

  app.post(
    '/status-pages/:id/incidents',
    {
      schema: {
        tags,
        summary: 'Write an incident on a status page: a draft unless published (extension)',
        params: IdParams,
        body: StatusPageIncidentCreateBody,
        response: {
          201: messageEnvelope(StatusPageIncident).describe('"Incident created successfully"'),
          ...authErrors,
          ...notFoundError,
          ...validationErrors,
        },
      },
    },
    async (req, reply) => {
      const data = await service.createIncident(ctx, principalOf(req), req.params.id, req.body);
      return reply.code(201).send({ message: 'Incident created successfully', data });
    },
  );

  app.get(
    '/status-pages/:id/incidents/:incident_id',
    {
      schema: {
        tags,
        summary: 'Get an incident of a status page, with its timeline (extension)',
        params: IncidentParams,
        response: { 200: dataEnvelope(StatusPageIncident), ...authErrors, ...notFoundError },
      },
    },
    async (req) => ({ data: await service.getIncident(ctx, principalOf(req), req.params.id, req.params.incident_id) }),
  );

  app.patch(
    '/status-pages/:id/incidents/:incident_id',
    {
      schema: {
        tags,
        summary: 'Update an incident: title, impact, components, postmortem, published (extension)',
        params: IncidentParams,
        body: StatusPageIncidentUpdateBody,
        response: {
          200: messageEnvelope(StatusPageIncident).describe('"Incident updated successfully"'),
          ...authErrors,
          ...notFoundError,
          ...validationErrors,
        },
      },
    },
    async (req) => ({
      message: 'Incident updated successfully',
      data: await service.updateIncident(ctx, principalOf(req), req.params.id, req.params.incident_id, req.body),
    }),
  );

  app.delete(
    '/status-pages/:id/incidents/:incident_id',
    {
      schema: {
        tags,
        summary: 'Delete an incident (an outage it was drafted from is not drafted again) (extension)',
        params: IncidentParams,
        response: { 204: z.null().describe('Deleted'), ...authErrors, ...notFoundError },
      },
    },
    async (req, reply) => {
      await service.deleteIncident(ctx, principalOf(req), req.params.id, req.params.incident_id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/status-pages/:id/incidents/:incident_id/updates',
    {
      schema: {
        tags,
        summary: 'Post an update on an incident’s timeline; it moves the incident to its status (extension)',
        params: IncidentParams,
        body: IncidentUpdatePostBody,
        response: {
          201: messageEnvelope(StatusPageIncident).describe('"Incident update posted successfully"'),
          ...authErrors,
          ...notFoundError,
          ...validationErrors,
        },
      },
    },
    async (req, reply) => {
      const data = await service.postIncidentUpdate(ctx, principalOf(req), req.params.id, req.params.incident_id, req.body);
      return reply.code(201).send({ message: 'Incident update posted successfully', data });
    },
  );
}
