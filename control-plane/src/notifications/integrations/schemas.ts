import { z } from 'zod';
import { IntegrationType, integrationTypes, Notification } from '../../../../shared/src/contracts/notify.ts';
import { channelSpecs } from '../channels/index.ts';
import { MessageTemplate, MessageTemplateView } from '../templates.ts';
import { ProjectSummary } from '../../projects/schemas.ts';

const name = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .refine((v) => !v.includes('\u0000'), 'The name field must not contain NUL characters.');

function variant<T extends (typeof integrationTypes)[number]>(type: T) {
  return z.object({
    project_id: z.uuid(),
    name,
    type: z.literal(type),
    config: channelSpecs[type].config,
    active: z.boolean().default(true),
    template: MessageTemplate.nullable().optional(),
  });
}

const typeError = (iss: z.core.$ZodRawIssue) => {
  if (iss.code !== 'invalid_union') return undefined;
  const given = (iss.input as { type?: unknown } | undefined)?.type;
  return given === undefined ? 'The type field is required.' : `The selected type is invalid. Allowed: ${integrationTypes.join(', ')}.`;
};

/** A create: `config` is validated by the schema of its `type`. */
export const IntegrationCreateBody = z.discriminatedUnion(
  'type',
  [
    variant('webhook'),
    variant('slack'),
    variant('discord'),
    variant('teams'),
    variant('telegram'),
    variant('email'),
    variant('pagerduty'),
    variant('ntfy'),
  ],
  { error: typeError },
);
export type IntegrationCreateBody = z.infer<typeof IntegrationCreateBody>;

/**
 * PATCH: fields sent change. `config` is merged into the stored settings (a secret left out is
 * kept, `null` removes an optional one) and the result is validated as a whole.
 */
export const IntegrationUpdateBody = z.object({
  name: name.optional(),
  active: z.boolean().optional(),
  type: IntegrationType.optional().describe('Cannot change; accepted when equal to the current type.'),
  config: z.record(z.string(), z.unknown()).optional(),
  template: MessageTemplate.nullable().optional().describe('Replaces the whole template; null (or {}) goes back to the standard wording.'),
});
export type IntegrationUpdateBody = z.infer<typeof IntegrationUpdateBody>;

export const IntegrationListQuery = z.object({ project_id: z.uuid().optional() });

export const Integration = z
  .object({
    id: z.uuid(),
    project_id: z.uuid(),
    name: z.string(),
    type: IntegrationType,
    active: z.boolean(),
    config: z
      .record(z.string(), z.unknown())
      .describe(
        'The settings. Secrets are never returned: `<name>_set` tells whether one is stored, `<name>_hint` shows the host and last characters of a secret URL.',
      ),
    template: MessageTemplateView.nullable().describe('The message template (docs/messages.md); null: the standard wording.'),
    delivery: z
      .object({
        failing: z
          .boolean()
          .describe('Its attempts keep failing (5 in a row, or for 10 minutes): the project was told through its other integrations.'),
        failures: z.number().int().describe('Failed attempts in a row since its last delivered one.'),
        failing_since: z.string().nullable().describe('When that run of failures began; null when its last attempt was delivered.'),
        last_failure: z.string().nullable().describe('What the last failed attempt got (host named, secrets left out).'),
      })
      .describe('Extension: how its deliveries go (ADR 0032).'),
    created_at: z.string(),
    updated_at: z.string(),
    project: ProjectSummary,
  })
  .meta({ id: 'Integration' });
export type Integration = z.infer<typeof Integration>;

/** A request as a preview or a test send shows it: secrets replaced by `[redacted]`. */
export const OutboundView = z
  .discriminatedUnion('kind', [
    z.object({
      kind: z.literal('http'),
      method: z.literal('POST'),
      url: z.string().describe('The URL, its secret parts (a webhook URL, a bot token) redacted.'),
      headers: z.record(z.string(), z.string()).describe('The headers the channel sets (user-agent included); secret values redacted.'),
      body: z.string().describe('The body, byte for byte (JSON text), secrets redacted.'),
    }),
    z.object({
      kind: z.literal('email'),
      smtp_url: z.string().nullable().describe('The SMTP server, without credentials; null when none is set.'),
      from: z.string(),
      to: z.array(z.string()),
      subject: z.string(),
      headers: z.record(z.string(), z.string()),
      text: z.string(),
      html: z.string(),
    }),
  ])
  .meta({ id: 'OutboundRequest' });
export type OutboundView = z.infer<typeof OutboundView>;

/** Which sample a preview or a test send words. */
export const SampleEvent = z
  .enum(['monitor.down', 'integration.test'])
  .describe('monitor.down: a sample outage with sample action links; integration.test: the test message.');

export const PreviewBody = z.strictObject({
  template: MessageTemplate.nullable()
    .optional()
    .describe("A template to preview instead of the stored one (not saved); null: the standard wording; absent: the integration's own."),
  event: SampleEvent.default('monitor.down'),
});
export type PreviewBody = z.infer<typeof PreviewBody>;

export const TestBody = z.strictObject({
  template: MessageTemplate.nullable()
    .optional()
    .describe("A template to send with instead of the stored one (not saved); null: the standard wording; absent: the integration's own."),
  event: SampleEvent.default('integration.test'),
});
export type TestBody = z.infer<typeof TestBody>;

export const IntegrationPreview = z
  .object({
    notification: Notification.describe('The sample notification the requests are made from.'),
    requests: z.array(OutboundView).describe('What the channel would send for it, in order.'),
  })
  .meta({ id: 'IntegrationPreview' });
export type IntegrationPreview = z.infer<typeof IntegrationPreview>;

export const TestSendResult = z
  .object({
    delivery_id: z.uuid(),
    delivered: z.boolean(),
    error: z.string().nullable().describe('Why the receiver refused or could not be reached.'),
    retryable: z.boolean().nullable().describe('Whether a queued delivery would have been retried after this error.'),
    duration_ms: z.number().int(),
    sent: z.array(OutboundView).describe('What was sent (or tried), in order, secrets redacted.'),
  })
  .meta({ id: 'IntegrationTestResult' });
export type TestSendResult = z.infer<typeof TestSendResult>;
