import { z } from 'zod';
import { principalOf } from '../../accounts/bearer.ts';
import type { ApiContext, App } from '../../platform/http/context.ts';
import { authErrors, dataEnvelope, messageEnvelope, notFoundError, validationErrors } from '../../platform/http/envelopes.ts';
import { listEnvelope, PageQuery, pageMeta } from '../../platform/http/pagination.ts';
import { IdParams } from '../../platform/http/params.ts';
import { createChannels } from '../channels/index.ts';
import { addressPolicy } from '../../../../shared/src/net/lookup.ts';
import { createHttpClient } from '../channels/http.ts';
import { DeliveryView } from '../log.ts';
import {
  Integration,
  IntegrationCreateBody,
  IntegrationListQuery,
  IntegrationPreview,
  IntegrationUpdateBody,
  PreviewBody,
  TestBody,
  TestSendResult,
} from './schemas.ts';
import * as service from './service.ts';

export function integrationRoutes(app: App, ctx: ApiContext): void {
  const tags = ['Integrations'];
  const http = createHttpClient(addressPolicy(ctx.config));
  const channels = createChannels({ http, smtp: { url: ctx.config.SMTP_URL, from: ctx.config.SMTP_FROM }, now: ctx.now });
  app.addHook('onClose', () => http.close());

  app.get(
    '/integrations',
    {
      schema: {
        tags,
        summary: 'List integrations (of one project, or of all your projects)',
        querystring: PageQuery.extend(IntegrationListQuery.shape),
        response: { 200: listEnvelope(Integration), ...authErrors, 422: validationErrors[422] },
      },
    },
    async (req) => {
      const { items, total } = await service.listIntegrations(ctx, principalOf(req), req.query.project_id, req.query);
      return { data: items, meta: pageMeta(req.query, total) };
    },
  );

  app.post(
    '/integrations',
    {
      schema: {
        tags,
        summary: 'Create an integration (config depends on type; secrets are write-only)',
        body: IntegrationCreateBody,
        response: { 201: messageEnvelope(Integration).describe('"Integration created successfully"'), ...authErrors, ...validationErrors },
      },
    },
    async (req, reply) => {
      const integration = await service.createIntegration(ctx, principalOf(req), req.body);
      return reply.code(201).send({ message: 'Integration created successfully', data: integration });
    },
  );

  app.get(
    '/integrations/:id',
    {
      schema: {
        tags,
        summary: 'Get an integration',
        params: IdParams,
        response: { 200: dataEnvelope(Integration), ...authErrors, ...notFoundError },
      },
    },
    async (req) => ({ data: await service.getIntegration(ctx, principalOf(req), req.params.id) }),
  );

  app.patch(
    '/integrations/:id',
    {
      schema: {
        tags,
        summary: 'Update an integration (fields sent change; config is merged, secrets left out are kept)',
        params: IdParams,
        body: IntegrationUpdateBody,
        response: {
          200: messageEnvelope(Integration).describe('"Integration updated successfully"'),
          ...authErrors,
          ...notFoundError,
          ...validationErrors,
        },
      },
    },
    async (req) => ({
      message: 'Integration updated successfully',
      data: await service.updateIntegration(ctx, principalOf(req), req.params.id, req.body),
    }),
  );

  app.delete(
    '/integrations/:id',
    {
      schema: {
        tags,
        summary: 'Delete an integration',
        params: IdParams,
        response: { 204: z.null().describe('Deleted'), ...authErrors, ...notFoundError },
      },
    },
    async (req, reply) => {
      await service.deleteIntegration(ctx, principalOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/integrations/:id/preview',
    {
      schema: {
        tags,
        summary: 'Show the exact request(s) the integration would send for a sample alert (secrets redacted; nothing is sent)',
        params: IdParams,
        body: PreviewBody.nullish(),
        response: { 200: dataEnvelope(IntegrationPreview), ...authErrors, ...notFoundError, ...validationErrors },
      },
    },
    async (req) => ({
      data: await service.previewIntegration(ctx, principalOf(req), req.params.id, req.body ?? PreviewBody.parse({}), channels),
    }),
  );

  app.post(
    '/integrations/:id/test',
    {
      schema: {
        tags,
        summary: 'Send a test message through the integration now, and show what was sent',
        params: IdParams,
        body: TestBody.nullish(),
        response: { 200: messageEnvelope(TestSendResult), ...authErrors, ...notFoundError, ...validationErrors },
      },
    },
    async (req) => {
      const result = await service.testIntegration(ctx, principalOf(req), req.params.id, channels, req.body ?? TestBody.parse({}));
      return { message: result.delivered ? 'Test message delivered' : 'Test message not delivered', data: result };
    },
  );

  app.get(
    '/integrations/:id/deliveries',
    {
      schema: {
        tags,
        summary: 'Delivery log of an integration, newest first',
        params: IdParams,
        querystring: PageQuery,
        response: { 200: listEnvelope(DeliveryView), ...authErrors, ...notFoundError, 422: validationErrors[422] },
      },
    },
    async (req) => {
      const { items, total } = await service.listDeliveries(ctx, principalOf(req), req.params.id, req.query);
      return { data: items, meta: pageMeta(req.query, total) };
    },
  );
}
