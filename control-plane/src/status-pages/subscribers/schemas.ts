import { z } from 'zod';
import { httpUrl } from '../../notifications/channels/types.ts';
import { normalEmail } from './rules.ts';

export const subscriberKinds = ['email', 'webhook'] as const;

const EmailSubscriberBody = z.strictObject({
  type: z.literal('email'),
  email: z
    .string()
    .max(254)
    .refine((v) => normalEmail(v) !== null, 'The email field must be one email address.')
    .describe('The address; a confirmation email is sent to it, and nothing else until it is confirmed.'),
});

const WebhookSubscriberBody = z.strictObject({
  type: z.literal('webhook'),
  url: httpUrl.describe('Write-only: where each notice is POSTed (JSON). Held to the address policy (BLOCK_PRIVATE_TARGETS).'),
  secret: z
    .string()
    .min(16)
    .max(255)
    .optional()
    .describe('Write-only. Signs each request: X-Uptime-Signature: sha256=HMAC-SHA256(secret, "<timestamp>.<body>") in hex.'),
});

export const SubscriberCreateBody = z
  .discriminatedUnion('type', [EmailSubscriberBody, WebhookSubscriberBody])
  .describe('An email subscriber (double opt-in) or a webhook subscriber (active at once).');
export type SubscriberCreateBody = z.infer<typeof SubscriberCreateBody>;

export const Subscriber = z.object({
  id: z.uuid(),
  status_page_id: z.uuid(),
  type: z.enum(subscriberKinds),
  email: z.string().nullable().describe('An email subscriber’s address; null for a webhook.'),
  webhook_host: z.string().nullable().describe('The host a webhook subscriber’s URL points at; the URL itself is never returned.'),
  webhook_secret_set: z.boolean().describe('A webhook subscriber signs its requests.'),
  confirmed: z.boolean().describe('Messages are sent to it (an email subscriber has clicked its confirmation link).'),
  confirmed_at: z.string().nullable(),
  added_by: z.string().nullable().describe('Who added it; null: a visitor of the page subscribed.'),
  delivered: z.number().int().describe('Messages sent to it.'),
  failed: z.number().int().describe('Messages given up on after their attempts.'),
  last_error: z.string().nullable().describe('The latest failure of a message to it, if any.'),
  created_at: z.string(),
});
export type Subscriber = z.infer<typeof Subscriber>;

export const SubscriberListQuery = z.object({
  type: z.enum(subscriberKinds).optional().describe('Only subscribers of this type.'),
  confirmed: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional()
    .describe('true: confirmed only; false: waiting for confirmation only.'),
});

export const SubscriberParams = z.object({ id: z.uuid().describe('The status page.'), subscriber_id: z.uuid() });
