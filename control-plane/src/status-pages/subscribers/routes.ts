import { z } from 'zod';
import { principalOf } from '../../accounts/bearer.ts';
import type { ApiContext, App } from '../../platform/http/context.ts';
import {
  authErrors,
  dataEnvelope,
  messageEnvelope,
  notFoundError,
  validationErrors,
  ValidationErrorBody,
} from '../../platform/http/envelopes.ts';
import { listEnvelope, PageQuery, pageMeta } from '../../platform/http/pagination.ts';
import { IdParams } from '../../platform/http/params.ts';
import { Subscriber, SubscriberCreateBody, SubscriberListQuery, SubscriberParams } from './schemas.ts';
import * as service from './service.ts';

/** The subscribers of a status page (an extension of the API): a thin adapter over subscribers/service.ts. */
export function statusPageSubscriberRoutes(app: App, ctx: ApiContext): void {
  const tags = ['Status pages'];

  app.get(
    '/status-pages/:id/subscribers',
    {
      schema: {
        tags,
        summary: 'List the subscribers of a status page, oldest first (extension)',
        params: IdParams,
        querystring: PageQuery.extend(SubscriberListQuery.shape),
        response: { 200: listEnvelope(Subscriber), ...authErrors, ...notFoundError, 422: validationErrors[422] },
      },
    },
    async (req) => {
      const { items, total } = await service.listSubscribers(ctx, principalOf(req), req.params.id, req.query, req.query);
      return { data: items, meta: pageMeta(req.query, total) };
    },
  );

  app.post(
    '/status-pages/:id/subscribers',
    {
      schema: {
        tags,
        summary: 'Add a subscriber: an email address (sent a confirmation first) or a webhook (extension)',
        params: IdParams,
        body: SubscriberCreateBody,
        response: {
          201: messageEnvelope(Subscriber).describe('"Subscriber added successfully"'),
          ...authErrors,
          ...notFoundError,
          ...validationErrors,
          409: ValidationErrorBody.describe('The address is subscribed already, or was asked to confirm already.'),
        },
      },
    },
    async (req, reply) => {
      const data = await service.addSubscriber(ctx, principalOf(req), req.params.id, req.body);
      return reply.code(201).send({ message: 'Subscriber added successfully', data });
    },
  );

  app.get(
    '/status-pages/:id/subscribers/:subscriber_id',
    {
      schema: {
        tags,
        summary: 'Get a subscriber of a status page (extension)',
        params: SubscriberParams,
        response: { 200: dataEnvelope(Subscriber), ...authErrors, ...notFoundError },
      },
    },
    async (req) => ({ data: await service.getSubscriber(ctx, principalOf(req), req.params.id, req.params.subscriber_id) }),
  );

  app.delete(
    '/status-pages/:id/subscribers/:subscriber_id',
    {
      schema: {
        tags,
        summary: 'Remove a subscriber: nothing more is sent to it (extension)',
        params: SubscriberParams,
        response: { 204: z.null().describe('Removed'), ...authErrors, ...notFoundError },
      },
    },
    async (req, reply) => {
      await service.removeSubscriber(ctx, principalOf(req), req.params.id, req.params.subscriber_id);
      return reply.code(204).send(null);
    },
  );
}
