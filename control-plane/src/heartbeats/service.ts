import type { DomainEvent } from '../../../shared/src/contracts/events.ts';
import { requireProject, type Principal } from '../accounts/bearer.ts';
import { AppError, notFound } from '../platform/errors.ts';
import { recordEvent, type OutboxPublisher } from '../platform/outbox.ts';
import type { ApiContext } from '../platform/http/context.ts';
import type { PageQuery } from '../platform/http/pagination.ts';
import { formatTimestamp } from '../platform/http/time.ts';
import { heartbeatEvent } from './events.ts';
import { keepOrSet, stateOf, storedRuns, toIso } from './record.ts';
import { linkDependencies } from '../dependencies/service.ts';
import { checkIntegrationIds, linkIntegrations } from '../notifications/integrations/links.ts';
import { heartbeatSnoozeUrl } from '../alerts/links.ts';
import * as repo from './repo.ts';
import type { Heartbeat, HeartbeatCreateBody, HeartbeatUpdateBody } from './schemas.ts';
import { DEFAULT_SUCCESS_EXIT_CODES } from './output.ts';
import { initialState, nextState, type ConfigChanges, type HeartbeatState } from './state.ts';

/** A minimum run time must be shorter than the run-time limit (the grace period when there is none). */
function checkDurations(state: Pick<HeartbeatState, 'min_duration' | 'max_duration' | 'grace_period'>): void {
  if (state.min_duration === null) return;
  const limit = state.max_duration ?? state.grace_period;
  if (state.min_duration < limit) return;
  const message = `The min_duration field must be less than ${state.max_duration === null ? 'the grace_period' : 'max_duration'} (${limit} seconds).`;
  throw new AppError('VALIDATION', message, { min_duration: [message] });
}

/** The API's context, and where the events a PATCH causes are published after it commits. */
export type HeartbeatContext = ApiContext & { outbox: Pick<OutboxPublisher, 'publish'> };

/** The persisted state advanced to now by the rules; null while paused. */
const tickedState = (v: repo.HeartbeatRecord, now: Date) => (v.active ? nextState(stateOf(v), { type: 'tick' }, now).state : null);

/**
 * Reads show the persisted state advanced to now by the rules (a tick), so a heartbeat past its
 * next_ping_at reads late even while no deadline actor has written it yet.
 */
function present(ctx: ApiContext, v: repo.HeartbeatView, now: Date): Heartbeat {
  const pingUrl = `${ctx.config.PING_BASE_URL}/heartbeat/${v.id}`;
  const state = tickedState(v, now);
  const status = state ? state.status : 'paused';
  const running = state
    ? [
        ...(state.started_at ? [{ rid: null, started_at: state.started_at.toISOString() }] : []),
        ...storedRuns(state.runs).map((r) => ({ rid: r.rid, started_at: r.started_at })),
      ].map((r) => ({ rid: r.rid, started_at: formatTimestamp(r.started_at) }))
    : [];
  return {
    id: v.id,
    name: v.name,
    project_id: v.project_id,
    grace_period: v.grace_period,
    cron_schedule: v.cron_schedule,
    next_ping_at: formatTimestamp(v.next_ping_at),
    created_at: formatTimestamp(v.created_at),
    updated_at: formatTimestamp(v.updated_at),
    ping_url: pingUrl,
    start_url: `${pingUrl}/start`,
    fail_url: `${pingUrl}/fail`,
    project: { id: v.project_id, name: v.project_name, description: v.project_description },
    status,
    last_ping_at: formatTimestamp(v.last_ping_at),
    period: v.period,
    timezone: v.timezone,
    active: v.active,
    integration_ids: v.integration_ids,
    depends_on: v.depends_on,
    max_duration: v.max_duration,
    min_duration: v.min_duration,
    too_frequent_ratio: v.too_frequent_ratio,
    alert_after_failures: v.alert_after_failures,
    success_exit_codes: v.success_exit_codes,
    output_rules: v.output_rules,
    last_success_at: formatTimestamp(v.last_success_at),
    failed_runs: v.failed_runs,
    running,
    snoozed_until:
      v.snoozed_until !== null && Date.parse(formatTimestamp(v.snoozed_until)) > now.getTime() ? formatTimestamp(v.snoozed_until) : null,
    snooze_url: heartbeatSnoozeUrl(ctx.keys.alertLinks, ctx.config.PING_BASE_URL, v.id),
  };
}

export async function listHeartbeats(ctx: ApiContext, p: Principal, projectId: string | undefined, page: PageQuery) {
  if (projectId) requireProject(p, projectId);
  const { views, total } = await repo.listHeartbeats(ctx.sql, projectId ? [projectId] : [...p.projectIds], page);
  const now = ctx.now();
  return { items: views.map((v) => present(ctx, v, now)), total };
}

/** What a status page shows of a project's heartbeats (these ids, or all): id, name and status as reads show it, oldest first. */
export async function heartbeatStates(
  ctx: ApiContext,
  p: Principal,
  projectId: string,
  ids?: readonly string[],
): Promise<{ id: string; name: string; status: Heartbeat['status'] }[]> {
  requireProject(p, projectId);
  const now = ctx.now();
  return (await repo.heartbeatRecords(ctx.sql, projectId, ids)).map((v) => ({
    id: v.id,
    name: v.name,
    status: tickedState(v, now)?.status ?? 'paused',
  }));
}

export async function getHeartbeat(ctx: ApiContext, p: Principal, id: string): Promise<Heartbeat> {
  const view = await repo.findHeartbeat(ctx.sql, id, [...p.projectIds]);
  if (!view) throw notFound();
  return present(ctx, view, ctx.now());
}

export async function createHeartbeat(ctx: ApiContext, p: Principal, body: HeartbeatCreateBody): Promise<Heartbeat> {
  requireProject(p, body.project_id);
  await checkIntegrationIds(ctx.sql, body.project_id, body.integration_ids);
  const explicit = body.next_ping_at ?? null;
  // Not ticked here: a next_ping_at given in the past is left for the deadline actor to find, so
  // the late and down it causes are published as events; reads already show them.
  const state = initialState(
    {
      grace_period: body.grace_period,
      next_ping_at: explicit === null ? null : new Date(explicit),
      cron_schedule: body.cron_schedule ?? null,
      timezone: body.timezone,
      period: body.period ?? null,
      active: body.active,
      max_duration: body.max_duration ?? null,
      min_duration: body.min_duration ?? null,
      too_frequent_ratio: body.too_frequent_ratio ?? null,
      alert_after_failures: body.alert_after_failures,
    },
    ctx.now(),
  );
  checkDurations(state);
  const write = {
    project_id: body.project_id,
    name: body.name,
    grace_period: state.grace_period,
    cron_schedule: state.cron_schedule,
    timezone: state.timezone,
    period: state.period,
    next_ping_at: explicit ?? toIso(state.next_ping_at),
    active: state.active,
    status: state.status,
    started_at: toIso(state.started_at),
    down_since: toIso(state.down_since),
    runs: [],
    max_duration: state.max_duration,
    min_duration: state.min_duration,
    too_frequent_ratio: state.too_frequent_ratio,
    alert_after_failures: state.alert_after_failures,
    success_exit_codes: body.success_exit_codes ?? [...DEFAULT_SUCCESS_EXIT_CODES],
    output_rules: body.output_rules ?? [],
  };
  const id = await ctx.sql.begin(async (tx) => {
    const id = await repo.insertHeartbeat(tx, write);
    await linkIntegrations(tx, { kind: 'heartbeat', id }, body.integration_ids);
    await linkDependencies(tx, body.project_id, { type: 'heartbeat', id }, body.depends_on ?? []);
    return id;
  });
  return getHeartbeat(ctx, p, id);
}

/**
 * PATCH: the fields sent change, through the heartbeat rules (state.ts, `config`), so a new
 * schedule recomputes next_ping_at from now and a pause reads paused, as the deadline actor
 * would have it. Transitions the change causes at once are events, published after commit;
 * the deadline actor hears of the change (trigger, NOTIFY) and re-arms.
 */
export async function updateHeartbeat(ctx: HeartbeatContext, p: Principal, id: string, body: HeartbeatUpdateBody): Promise<Heartbeat> {
  const events = await ctx.sql.begin(async (tx) => {
    const current = await repo.lockHeartbeat(tx, id, [...p.projectIds]);
    if (!current) throw notFound();
    await checkIntegrationIds(tx, current.project_id, body.integration_ids);
    const changes: ConfigChanges = {
      grace_period: body.grace_period,
      cron_schedule: body.cron_schedule,
      timezone: body.timezone,
      period: body.period,
      active: body.active,
      next_ping_at: body.next_ping_at == null ? body.next_ping_at : new Date(body.next_ping_at),
      max_duration: body.max_duration,
      min_duration: body.min_duration,
      too_frequent_ratio: body.too_frequent_ratio,
      alert_after_failures: body.alert_after_failures,
    };
    const before = stateOf(current);
    const { state, effects } = nextState(before, { type: 'config', changes }, ctx.now());
    checkDurations(state);
    await repo.updateHeartbeat(tx, id, {
      name: body.name ?? current.name,
      grace_period: state.grace_period,
      cron_schedule: state.cron_schedule,
      timezone: state.timezone,
      period: state.period,
      next_ping_at:
        body.next_ping_at !== undefined ? body.next_ping_at : keepOrSet(current.next_ping_at, before.next_ping_at, state.next_ping_at),
      active: state.active,
      status: state.status,
      started_at: keepOrSet(current.started_at, before.started_at, state.started_at),
      down_since: keepOrSet(current.down_since, before.down_since, state.down_since),
      runs: state.runs === before.runs ? current.runs : storedRuns(state.runs),
      max_duration: state.max_duration,
      min_duration: state.min_duration,
      too_frequent_ratio: state.too_frequent_ratio,
      alert_after_failures: state.alert_after_failures,
      success_exit_codes: body.success_exit_codes ?? current.success_exit_codes,
      output_rules: body.output_rules ?? current.output_rules,
    });
    await linkIntegrations(tx, { kind: 'heartbeat', id }, body.integration_ids);
    await linkDependencies(tx, current.project_id, { type: 'heartbeat', id }, body.depends_on);
    // The row lock claims the transition: a deadline actor waits for it, then finds the state
    // already moved, so what this change raised (late, down) is written once, here.
    const recorded: DomainEvent[] = [];
    for (const e of effects.events) recorded.push(await recordEvent(tx, heartbeatEvent(current, e, before, state)));
    return recorded;
  });
  if (events.length > 0) await ctx.outbox.publish(events);
  return getHeartbeat(ctx, p, id);
}

export async function deleteHeartbeat(ctx: ApiContext, p: Principal, id: string): Promise<void> {
  if (!(await repo.deleteHeartbeat(ctx.sql, id, [...p.projectIds]))) throw notFound();
}
