import { z } from 'zod';
import { DeliveryView } from '../notifications/log.ts';
import { ProjectSummary } from '../projects/schemas.ts';

export const MAX_MESSAGE = 4000;
export const ratePeriods = ['second', 'minute', 'hour', 'day'] as const;

const name = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .refine((v) => !v.includes('\u0000'), 'The name field must not contain NUL characters.');
const defaultMessage = z
  .string()
  .trim()
  .min(1)
  .max(MAX_MESSAGE)
  .refine((v) => !v.includes('\u0000'), 'The default_message field must not contain NUL characters.')
  .describe('Sent when a call carries no message; 1..4000 characters.');
const integrationIds = z
  .array(z.uuid())
  .max(100)
  .describe('Integrations of the same project that receive the messages (active ones only).');
const RateLimit = z
  .object({
    max: z.number().int().min(1).max(1_000_000),
    per: z.enum(ratePeriods),
  })
  .nullable()
  .describe(
    'At most `max` calls per calendar second, minute, hour or day (UTC), each counted at the moment it is decided; null accepts every call.',
  );

export const TriggerCreateBody = z.object({
  project_id: z.uuid(),
  name,
  default_message: defaultMessage,
  integration_ids: integrationIds.default([]),
  token_protected: z.boolean().default(false).describe('When true, the create answer carries the token, once.'),
  rate_limit: RateLimit.default(null),
  active: z.boolean().default(true).describe('false pauses the trigger: calls are answered and recorded, nothing is sent.'),
});
export type TriggerCreateBody = z.infer<typeof TriggerCreateBody>;

/** PATCH: fields sent change; project_id is ignored. */
export const TriggerUpdateBody = z.object({
  name: name.optional(),
  default_message: defaultMessage.optional(),
  integration_ids: integrationIds.optional().describe('Replaces the linked set ([] empties it).'),
  token_protected: z
    .boolean()
    .optional()
    .describe('Turning protection on keeps the current token; without one, calls get 401 until POST /triggers/{id}/token.'),
  rate_limit: RateLimit.optional(),
  active: z.boolean().optional(),
});
export type TriggerUpdateBody = z.infer<typeof TriggerUpdateBody>;

export const TriggerListQuery = z.object({ project_id: z.uuid().optional() });

export const Trigger = z
  .object({
    id: z.uuid(),
    project_id: z.uuid(),
    name: z.string(),
    default_message: z.string(),
    integration_ids: z.array(z.uuid()),
    token_protected: z.boolean(),
    token_hint: z.string().nullable().describe('The first characters of the current token (uptt_…); null when there is none.'),
    rate_limit: RateLimit,
    active: z.boolean(),
    url: z.string().describe('{trigger_base_url}/api/notify/<id>'),
    fire_count: z.number().int(),
    last_fired_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    project: ProjectSummary,
  })
  .meta({ id: 'Trigger' });
export type Trigger = z.infer<typeof Trigger>;

export const TriggerWithToken = Trigger.extend({
  token: z.string().describe('Shown this once; only its SHA-256 is kept.'),
}).meta({ id: 'TriggerWithToken' });

export const TriggerEventView = z
  .object({
    id: z.uuid(),
    message: z.string(),
    outcome: z.enum(['dispatched', 'paused', 'no_integrations']),
    integrations: z.number().int().describe('Integrations the message was queued for.'),
    source_address: z.string().nullable(),
    user_agent: z.string().nullable(),
    fired_at: z.string(),
    deliveries: z.array(DeliveryView),
  })
  .meta({ id: 'TriggerEvent' });
export type TriggerEventView = z.infer<typeof TriggerEventView>;

export const FireAccepted = z
  .object({
    message: z.string(),
    data: z.object({
      event_id: z.uuid(),
      integrations: z.number().int().describe('How many integrations the message was queued for (0 when paused or none is active).'),
    }),
  })
  .meta({ id: 'TriggerFired' });
