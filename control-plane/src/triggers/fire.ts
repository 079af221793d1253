import type { Notification } from '../../../shared/src/contracts/notify.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import type { Sql } from '../platform/db/sql.ts';
import { AppError, notFound } from '../platform/errors.ts';
import { recordEvent, type OutboxPublisher } from '../platform/outbox.ts';
import { formatTimestamp } from '../platform/http/time.ts';
import { deliveriesForTriggerCall } from '../notifications/deliveries.ts';
import * as repo from './repo.ts';
import { MAX_MESSAGE } from './schemas.ts';
import { tokenMatches } from './token.ts';

export interface FireDeps {
  sql: Sql;
  log: Logger;
  /** Publishes the trigger.fired event at once; without it, the outbox relay does later. */
  outbox?: Pick<OutboxPublisher, 'publish'> | undefined;
}

export interface FireCall {
  triggerId: string;
  /** The message parameter as sent (query, form or JSON): anything, checked here. */
  message: unknown;
  /** Tokens the call presented (Bearer header, ?token=); any one may match. */
  tokens: string[];
  sourceAddress: string | null;
  userAgent: string | null;
}

export type FireOutcome = 'dispatched' | 'paused' | 'no_integrations';

export interface Fired {
  event_id: string;
  integrations: number;
  outcome: FireOutcome;
}

function invalid(message: string): AppError {
  return new AppError('VALIDATION', message, { message: [message] });
}

/** The message sent: the call's own, else the default; an empty one counts as none. */
export function resolveMessage(raw: unknown, fallback: string): string {
  if (raw === undefined || raw === null || raw === '') return fallback;
  if (typeof raw !== 'string') throw invalid('The message field must be a string.');
  if (raw.includes('\u0000')) throw invalid('The message field must not contain NUL characters.');
  if ([...raw].length > MAX_MESSAGE) throw invalid(`The message field must not be greater than ${MAX_MESSAGE} characters.`);
  return raw;
}

/**
 * One call of a notify URL: 404 for an unknown trigger, 401 without its token (when protected),
 * 422 for a bad message, 429 over the rate limit; otherwise the call is counted, recorded and its
 * deliveries committed in one transaction, then queued. A paused trigger, or one without an
 * active integration, records the call and sends nothing.
 */
export async function fireTrigger(deps: FireDeps, call: FireCall): Promise<Fired> {
  const target = await repo.findFireTarget(deps.sql, call.triggerId);
  if (!target) throw notFound();
  // Every presented token is hashed and compared, so timing says nothing about which one failed.
  const matches = call.tokens.map((t) => tokenMatches(t, target.token_hash));
  if (target.token_protected && !matches.includes(true)) throw new AppError('UNAUTHORIZED');
  const message = resolveMessage(call.message, target.default_message);

  const result = await deps.sql.begin(async (tx) => {
    const counted = await repo.countFire(tx, target.id);
    if (!counted) return { limited: await repo.retryAfterSeconds(tx, target.id) };
    const integrations = counted.active ? await repo.activeIntegrationsOf(tx, target.id) : [];
    const outcome: FireOutcome = !counted.active ? 'paused' : integrations.length === 0 ? 'no_integrations' : 'dispatched';
    const event = await repo.insertEvent(tx, {
      trigger_id: target.id,
      message,
      outcome,
      integrations: integrations.length,
      source_address: call.sourceAddress,
      user_agent: call.userAgent,
      fired_at: counted.fired_at,
    });
    const subject = { type: 'trigger' as const, id: target.id, name: target.name };
    const payload: Notification = {
      id: event.id,
      event: 'trigger.fired',
      message,
      occurred_at: formatTimestamp(event.fired_at),
      project: { id: target.project_id, name: target.project_name },
      subject,
      data: {},
    };
    await deliveriesForTriggerCall(tx, {
      triggerId: target.id,
      projectId: target.project_id,
      notification: payload,
      integrationIds: integrations.map((i) => i.id),
    });
    const domainEvent = await recordEvent(tx, {
      id: event.id,
      kind: 'trigger.fired',
      occurred_at: payload.occurred_at,
      project_id: target.project_id,
      subject,
      data: { message, outcome, integrations: integrations.length },
    });
    return { fired: { event_id: event.id, integrations: integrations.length, outcome }, domainEvent };
  });

  if ('limited' in result) {
    if (result.limited === undefined) throw notFound();
    throw new AppError('RATE_LIMITED', undefined, undefined, { 'retry-after': String(result.limited) });
  }
  if (deps.outbox) {
    await deps.outbox.publish([result.domainEvent]).catch((err: unknown) => deps.log.warn({ err }, 'trigger.fired not published yet'));
  }
  return result.fired;
}
