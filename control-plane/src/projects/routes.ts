import { z } from 'zod';
import { principalOf, requireOrganization } from '../accounts/bearer.ts';
import { AppError, notFound } from '../platform/errors.ts';
import type { ApiContext, App } from '../platform/http/context.ts';
import { authErrors, dataEnvelope, messageEnvelope, notFoundError, validationErrors } from '../platform/http/envelopes.ts';
import { listEnvelope, PageQuery, pageMeta } from '../platform/http/pagination.ts';
import { IdParams } from '../platform/http/params.ts';
import * as repo from './repo.ts';
import { Organization, Project, ProjectCreateBody, ProjectUpdateBody } from './schemas.ts';

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
      const { items, total } = await repo.listOrganizations(ctx.sql, principalOf(req).userId, req.query);
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
      const p = principalOf(req);
      if (req.query.organization_id) requireOrganization(p, req.query.organization_id);
      const orgs = req.query.organization_id ? [req.query.organization_id] : [...p.organizationIds];
      const { items, total } = await repo.listProjects(ctx.sql, orgs, req.query);
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
      const p = principalOf(req);
      const organizationId = req.body.organization_id ?? defaultOrganization(p);
      requireOrganization(p, organizationId);
      const project = await repo.insertProject(ctx.sql, { ...req.body, organization_id: organizationId });
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
      const project = await repo.findProject(ctx.sql, req.params.id, [...principalOf(req).organizationIds]);
      if (!project) throw notFound();
      return { data: project };
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
      const project = await repo.updateProject(ctx.sql, req.params.id, [...principalOf(req).organizationIds], req.body);
      if (!project) throw notFound();
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
      const p = principalOf(req);
      const project = await repo.findProject(ctx.sql, req.params.id, [...p.organizationIds]);
      if (!project) throw notFound();
      if (!p.ownedOrganizationIds.has(project.organization_id)) throw new AppError('FORBIDDEN');
      await repo.deleteProject(ctx.sql, req.params.id, [project.organization_id]);
      return reply.code(204).send(null);
    },
  );
}

function defaultOrganization(p: ReturnType<typeof principalOf>): string {
  const first = [...p.ownedOrganizationIds][0] ?? [...p.organizationIds][0];
  if (!first)
    throw new AppError('VALIDATION', 'The organization_id field is required.', {
      organization_id: ['The organization_id field is required.'],
    });
  return first;
}
