import { z } from 'zod';
import { IntegrationType, integrationTypes } from '../../../../shared/src/contracts/notify.ts';
import { channelSpecs } from '../channels/index.ts';
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
    created_at: z.string(),
    updated_at: z.string(),
    project: ProjectSummary,
  })
  .meta({ id: 'Integration' });
export type Integration = z.infer<typeof Integration>;

export const TestSendResult = z
  .object({
    delivery_id: z.uuid(),
    delivered: z.boolean(),
    error: z.string().nullable().describe('Why the receiver refused or could not be reached.'),
    retryable: z.boolean().nullable().describe('Whether a queued delivery would have been retried after this error.'),
    duration_ms: z.number().int(),
  })
  .meta({ id: 'IntegrationTestResult' });
export type TestSendResult = z.infer<typeof TestSendResult>;
