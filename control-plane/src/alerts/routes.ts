import { z } from 'zod';
import { principalOf } from '../accounts/bearer.ts';
import type { App } from '../platform/http/context.ts';
import { authErrors, dataEnvelope, MessageBody, messageEnvelope, notFoundError, validationErrors } from '../platform/http/envelopes.ts';
import { listEnvelope, PageQuery, pageMeta } from '../platform/http/pagination.ts';
import { IdParams } from '../platform/http/params.ts';
import { MAX_SNOOZE_MINUTES } from './rules.ts';
import * as service from './service.ts';
import { Alert } from './view.ts';

const conflictError = { 409: MessageBody.describe('The alert is resolved.') } as const;

export const SnoozeBody = z.object({
  minutes: z
    .number()
    .int()
    .min(1)
    .max(MAX_SNOOZE_MINUTES)
    .default(60)
    .describe(`How long, in minutes (1 to ${MAX_SNOOZE_MINUTES}, 7 days; default 60).`),
});

const AlertListQuery = z.object({
  project_id: z.uuid().optional().describe('Only this project (default: all of yours).'),
  status: z
    .enum(['open', 'unacknowledged', 'acknowledged', 'resolved'])
    .optional()
    .describe('open: not resolved (acknowledged or not); unacknowledged: open and not acknowledged. Default: all.'),
  monitor_id: z.uuid().optional(),
  heartbeat_id: z.uuid().optional(),
});

export const SubjectSnooze = z
  .object({
    type: z.enum(['monitor', 'heartbeat']),
    id: z.uuid(),
    project_id: z.uuid(),
    name: z.string(),
    snoozed_until: z.string().nullable().describe('Its alerts are held until then; null: not snoozed.'),
  })
  .meta({ id: 'Snooze' });

/** `/alerts` (extension, ADR 0032): the project's alerts, acknowledged and snoozed here. */
export function alertRoutes(app: App, ctx: service.AlertsContext): void {
  const tags = ['Alerts'];

  app.get(
    '/alerts',
    {
      schema: {
        tags,
        summary: 'List alerts, open ones first, then newest first',
        querystring: PageQuery.extend(AlertListQuery.shape),
        response: { 200: listEnvelope(Alert), ...authErrors, 422: validationErrors[422] },
      },
    },
    async (req) => {
      const { items, total } = await service.listAlerts(ctx, principalOf(req), req.query);
      return { data: items, meta: pageMeta(req.query, total) };
    },
  );

  app.get(
    '/alerts/:id',
    {
      schema: { tags, summary: 'Get an alert', params: IdParams, response: { 200: dataEnvelope(Alert), ...authErrors, ...notFoundError } },
    },
    async (req) => ({ data: await service.getAlert(ctx, principalOf(req), req.params.id) }),
  );

  app.post(
    '/alerts/:id/acknowledge',
    {
      schema: {
        tags,
        summary: 'Acknowledge an alert: its re-notifications and escalation stop (again: no change)',
        params: IdParams,
        response: { 200: messageEnvelope(Alert).describe('"Alert acknowledged"'), ...authErrors, ...notFoundError, ...conflictError },
      },
    },
    async (req) => {
      const p = principalOf(req);
      const data = await service.acknowledgeAlert(ctx, [...p.projectIds], req.params.id, { userId: p.userId, via: 'api' });
      return { message: 'Alert acknowledged', data };
    },
  );

  app.post(
    '/alerts/:id/snooze',
    {
      schema: {
        tags,
        summary: 'Snooze an alert: no re-notification or escalation until then; still open at the end, it is re-notified at once',
        params: IdParams,
        body: SnoozeBody,
        response: {
          200: messageEnvelope(Alert).describe('"Alert snoozed"'),
          ...authErrors,
          ...notFoundError,
          ...validationErrors,
          ...conflictError,
        },
      },
    },
    async (req) => {
      const p = principalOf(req);
      const data = await service.snoozeAlert(ctx, [...p.projectIds], req.params.id, req.body.minutes, { userId: p.userId, via: 'api' });
      return { message: 'Alert snoozed', data };
    },
  );

  for (const type of ['monitor', 'heartbeat'] as const) {
    const plural = `${type}s`;
    const Tag = [type === 'monitor' ? 'Monitors' : 'Heartbeats'];
    app.post(
      `/${plural}/:id/snooze`,
      {
        schema: {
          tags: Tag,
          summary: `Snooze a ${type}: checks go on, its alerts are held until then and sent at the end if it is still down (extension)`,
          params: IdParams,
          body: SnoozeBody,
          response: {
            200: messageEnvelope(SubjectSnooze).describe(`"${type === 'monitor' ? 'Monitor' : 'Heartbeat'} snoozed"`),
            ...authErrors,
            ...notFoundError,
            ...validationErrors,
          },
        },
      },
      async (req) => {
        const p = principalOf(req);
        const data = await service.snoozeSubject(ctx, { type, id: req.params.id }, [...p.projectIds], req.body.minutes, {
          userId: p.userId,
          via: 'api',
        });
        return { message: `${type === 'monitor' ? 'Monitor' : 'Heartbeat'} snoozed`, data };
      },
    );
    app.delete(
      `/${plural}/:id/snooze`,
      {
        schema: {
          tags: Tag,
          summary: `End a ${type}'s snooze now: alerts it held are sent if it is still down (extension)`,
          params: IdParams,
          response: { 200: messageEnvelope(SubjectSnooze).describe('"Snooze ended"'), ...authErrors, ...notFoundError },
        },
      },
      async (req) => {
        const p = principalOf(req);
        const data = await service.snoozeSubject(ctx, { type, id: req.params.id }, [...p.projectIds], null, {
          userId: p.userId,
          via: 'api',
        });
        return { message: 'Snooze ended', data };
      },
    );
  }
}
