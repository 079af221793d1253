import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { requireProject, type Principal } from '../../accounts/bearer.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import type { ApiContext } from '../../platform/http/context.ts';
import { summary, zodIssuesToErrors } from '../../platform/http/error-handler.ts';
import type { PageQuery } from '../../platform/http/pagination.ts';
import { formatTimestamp } from '../../platform/http/time.ts';
import { validationMessage } from '../../platform/http/validation.ts';
import type { Channels } from '../channels/index.ts';
import { channelSpecs } from '../channels/index.ts';
import { asDeliveryError, scrub } from '../errors.ts';
import { deliveriesOfIntegration } from '../log.ts';
import { recordTestDelivery } from '../repo.ts';
import { storedTemplate, type MessageTemplate } from '../templates.ts';
import type { Outbound } from '../channels/types.ts';
import { openSecrets, sealSecrets, splitSettings, storedSettings, viewSettings, type Settings } from './config.ts';
import { redact, sampleNotification } from './preview.ts';
import * as repo from './repo.ts';
import type {
  Integration,
  IntegrationCreateBody,
  IntegrationPreview,
  IntegrationUpdateBody,
  OutboundView,
  PreviewBody,
  TestBody,
  TestSendResult,
} from './schemas.ts';

/** The stored secrets; none when they cannot be opened (SECRET_KEY changed): they must be entered again. */
function secretsOf(ctx: ApiContext, r: repo.IntegrationRow): Settings {
  try {
    return openSecrets(r.secrets_sealed, ctx.keys.integrationSecrets);
  } catch {
    ctx.log.warn({ integrationId: r.id }, 'integration secrets cannot be opened');
    return {};
  }
}

function present(ctx: ApiContext, r: repo.IntegrationRow): Integration {
  const secret = secretsOf(ctx, r);
  return {
    id: r.id,
    project_id: r.project_id,
    name: r.name,
    type: r.type,
    active: r.active,
    config: viewSettings(r.type, r.config, secret),
    template: storedTemplate(r.template),
    delivery: {
      failing: r.failing_alerted_at !== null,
      failures: r.failures,
      failing_since: r.failing_since === null ? null : formatTimestamp(r.failing_since),
      last_failure: r.last_failure,
    },
    created_at: formatTimestamp(r.created_at),
    updated_at: formatTimestamp(r.updated_at),
    project: { id: r.project_id, name: r.project_name, description: r.project_description },
  };
}

async function findOwn(ctx: ApiContext, p: Principal, id: string): Promise<repo.IntegrationRow> {
  const row = await repo.findIntegration(ctx.sql, id, [...p.projectIds]);
  if (!row) throw notFound();
  return row;
}

export async function listIntegrations(ctx: ApiContext, p: Principal, projectId: string | undefined, page: PageQuery) {
  if (projectId) requireProject(p, projectId);
  const { rows, total } = await repo.listIntegrations(ctx.sql, projectId ? [projectId] : [...p.projectIds], page);
  return { items: rows.map((r) => present(ctx, r)), total };
}

export async function getIntegration(ctx: ApiContext, p: Principal, id: string): Promise<Integration> {
  return present(ctx, await findOwn(ctx, p, id));
}

export async function createIntegration(ctx: ApiContext, p: Principal, body: IntegrationCreateBody): Promise<Integration> {
  requireProject(p, body.project_id);
  const { shown, secret } = splitSettings(body.type, body.config);
  const id = await repo.insertIntegration(ctx.sql, body.project_id, {
    name: body.name,
    type: body.type,
    active: body.active,
    config: shown,
    secrets_sealed: sealSecrets(secret, ctx.keys.integrationSecrets),
    template: storedTemplate(body.template),
  });
  return getIntegration(ctx, p, id);
}

/** Settings sent are merged into the stored ones (secrets included), then the whole is validated. */
function mergeSettings(ctx: ApiContext, row: repo.IntegrationRow, patch: Settings): Settings {
  // No prototype: a setting named `__proto__` is refused by the schema, not merged into the prototype.
  const merged: Settings = Object.assign(Object.create(null) as Settings, row.config, secretsOf(ctx, row));
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete merged[k];
    else merged[k] = v;
  }
  const parsed = z.object({ config: channelSpecs[row.type].config }).safeParse({ config: merged }, { error: validationMessage });
  if (!parsed.success) {
    const errors = zodIssuesToErrors(parsed.error.issues);
    throw new AppError('VALIDATION', summary(errors), errors);
  }
  return parsed.data.config as Settings;
}

export async function updateIntegration(ctx: ApiContext, p: Principal, id: string, body: IntegrationUpdateBody): Promise<Integration> {
  const row = await findOwn(ctx, p, id);
  if (body.type !== undefined && body.type !== row.type) {
    const message = 'The type of an integration cannot be changed; create a new integration.';
    throw new AppError('VALIDATION', message, { type: [message] });
  }
  let config = row.config;
  let sealed = row.secrets_sealed;
  if (body.config !== undefined) {
    const { shown, secret } = splitSettings(row.type, mergeSettings(ctx, row, body.config));
    config = shown;
    sealed = sealSecrets(secret, ctx.keys.integrationSecrets);
  }
  await repo.updateIntegration(ctx.sql, id, {
    name: body.name ?? row.name,
    type: row.type,
    active: body.active ?? row.active,
    config,
    secrets_sealed: sealed,
    template: body.template === undefined ? row.template : storedTemplate(body.template),
  });
  return getIntegration(ctx, p, id);
}

export async function deleteIntegration(ctx: ApiContext, p: Principal, id: string): Promise<void> {
  if (!(await repo.deleteIntegration(ctx.sql, id, [...p.projectIds]))) throw notFound();
}

/** The template a preview or test send words: the one given (null: none), else the stored one. */
const templateFor = (row: repo.IntegrationRow, given: MessageTemplate | null | undefined) =>
  given === undefined ? storedTemplate(row.template) : storedTemplate(given);

/** What may be shown of requests made with these settings. */
function shown(out: readonly Outbound[], settings: { config: Settings; secrets: string[] }): OutboundView[] {
  const headers = settings.config.headers;
  const secretHeaders = headers && typeof headers === 'object' ? Object.keys(headers) : [];
  return out.map((o) => redact(o, settings.secrets, secretHeaders));
}

const sampleTarget = (row: repo.IntegrationRow) => ({
  id: row.id,
  name: row.name,
  project: { id: row.project_id, name: row.project_name },
});

/**
 * The exact request(s) the channel would send for a sample notification (a monitor down, with
 * sample action links, unless asked for the test message), worded by the given template or the
 * stored one; secrets redacted. Nothing is sent or stored.
 */
export async function previewIntegration(
  ctx: ApiContext,
  p: Principal,
  id: string,
  body: PreviewBody,
  channels: Channels,
): Promise<IntegrationPreview> {
  const row = await findOwn(ctx, p, id);
  const notification = sampleNotification(body.event, randomUUID(), sampleTarget(row), ctx.now(), ctx.config.PUBLIC_URL);
  let settings;
  try {
    settings = storedSettings(row.type, row.config, row.secrets_sealed, ctx.keys.integrationSecrets);
  } catch (err) {
    const message = asDeliveryError(err).message;
    throw new AppError('VALIDATION', message, { config: [message] });
  }
  const out = channels[row.type].build({
    id: randomUUID(),
    attempt: 1,
    notification,
    integration: { id: row.id, name: row.name },
    config: settings.config,
    template: templateFor(row, body.template),
  });
  return { notification, requests: shown(out, settings) };
}

/**
 * Sends a test message now, paused or not, records it in the delivery log and answers with the
 * outcome and what was sent (secrets redacted).
 */
export async function testIntegration(
  ctx: ApiContext,
  p: Principal,
  id: string,
  channels: Channels,
  body: TestBody = { event: 'integration.test' },
): Promise<TestSendResult> {
  const row = await findOwn(ctx, p, id);
  const deliveryId = randomUUID();
  const notification = sampleNotification(body.event, randomUUID(), sampleTarget(row), ctx.now(), ctx.config.PUBLIC_URL);
  const started = performance.now();
  let error: string | null = null;
  let retryable: boolean | null = null;
  let secrets: string[] = [];
  let sent: OutboundView[] = [];
  try {
    const settings = storedSettings(row.type, row.config, row.secrets_sealed, ctx.keys.integrationSecrets);
    secrets = settings.secrets;
    const delivery = {
      id: deliveryId,
      attempt: 1,
      notification,
      integration: { id: row.id, name: row.name },
      config: settings.config,
      template: templateFor(row, body.template),
    };
    const channel = channels[row.type];
    const out = channel.build(delivery);
    sent = shown(out, settings);
    await channel.transmit(out, delivery);
  } catch (err) {
    const failure = asDeliveryError(err);
    error = scrub(failure.message, secrets);
    retryable = !failure.permanent;
  }
  const duration_ms = Math.round(performance.now() - started);
  await recordTestDelivery(ctx.sql, { id: deliveryId, integration_id: row.id, project_id: row.project_id, payload: notification, error });
  return { delivery_id: deliveryId, delivered: error === null, error, retryable, duration_ms, sent };
}

export async function listDeliveries(ctx: ApiContext, p: Principal, id: string, page: PageQuery) {
  await findOwn(ctx, p, id);
  return deliveriesOfIntegration(ctx.sql, id, page);
}
