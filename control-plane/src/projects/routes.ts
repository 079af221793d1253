import { z } from 'zod';
import { principalOf } from '../accounts/bearer.ts';
import type { ApiContext, App } from '../platform/http/context.ts';
import { authErrors, dataEnvelope, messageEnvelope, notFoundError, validationErrors } from '../platform/http/envelopes.ts';
import { listEnvelope, PageQuery, pageMeta } from '../platform/http/pagination.ts';
import { IdParams } from '../platform/http/params.ts';
import { Organization, Project, ProjectCreateBody, ProjectUpdateBody } from './schemas.ts';
import * as projects from './service.ts';

export function organizationRoutes(app: App, ctx: ApiContext): void {
  app.get(
    '/organizations',
    {
      schema: {
        tags: ['Organizations'],
        summary: 'List your organizations',
        querystring: PageQuery,
        response: { 200: listEnvelope(Organization), ...authErrors, 422: validationErrors[422] },
      },
    },
    async (req) => {
      const { items, total } = await projects.listOrganizations(ctx.sql, principalOf(req), req.query);
      return { data: items, meta: pageMeta(req.query, total) };
    },
  );
}

export function projectRoutes(app: App, ctx: ApiContext): void {
  const tags = ['Projects'];
  app.get(
    '/projects',
    {
      schema: {
        tags,
        summary: 'List the projects of your organizations',
        querystring: PageQuery.extend({ organization_id: z.uuid().optional() }),
        response: { 200: listEnvelope(Project), ...authErrors, 422: validationErrors[422] },
      },
    },
    async (req) => {
      const { items, total } = await projects.listProjects(ctx.sql, principalOf(req), req.query.organization_id, req.query);
      return { data: items, meta: pageMeta(req.query, total) };
    },
  );

  app.post(
    '/projects',
    {
      schema: {
        tags,
        summary: 'Create a project',
        body: ProjectCreateBody,
        response: { 201: messageEnvelope(Project), ...authErrors, ...validationErrors },
      },
    },
    async (req, reply) => {
      const project = await projects.createProject(ctx.sql, principalOf(req), req.body);
      return reply.code(201).send({ message: 'Project created successfully', data: project });
    },
  );

  app.get(
    '/projects/:id',
    {
      schema: {
        tags,
        summary: 'Get a project',
        params: IdParams,
        response: { 200: dataEnvelope(Project), ...authErrors, ...notFoundError },
      },
    },
    async (req) => {
      return { data: await projects.getProject(ctx.sql, principalOf(req), req.params.id) };
    },
  );

  app.put(
    '/projects/:id',
    {
      schema: {
        tags,
        summary: 'Update a project',
        params: IdParams,
        body: ProjectUpdateBody,
        response: { 200: messageEnvelope(Project), ...authErrors, ...notFoundError, ...validationErrors },
      },
    },
    async (req) => {
      const project = await projects.updateProject(ctx.sql, principalOf(req), req.params.id, req.body);
      return { message: 'Project updated successfully', data: project };
    },
  );

  app.delete(
    '/projects/:id',
    {
      schema: {
        tags,
        summary: 'Delete a project and everything in it (organization owners only)',
        params: IdParams,
        response: { 204: z.null().describe('Deleted'), ...authErrors, ...notFoundError },
      },
    },
    async (req, reply) => {
      await projects.deleteProject(ctx.sql, principalOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );
}
