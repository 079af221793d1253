import { requireProject, type Principal } from '../accounts/bearer.ts';
import { notFound } from '../platform/errors.ts';
import type { ApiContext } from '../platform/http/context.ts';
import type { PageQuery } from '../platform/http/pagination.ts';
import { formatTimestamp } from '../platform/http/time.ts';
import { checkIntegrationIds, linkIntegrations } from '../notifications/integrations/links.ts';
import { deliveriesOfEvents } from '../notifications/log.ts';
import * as repo from './repo.ts';
import type { Trigger, TriggerCreateBody, TriggerEventView, TriggerUpdateBody } from './schemas.ts';
import { generateTriggerToken } from './token.ts';

export function triggerUrl(ctx: Pick<ApiContext, 'config'>, id: string): string {
  return `${ctx.config.TRIGGER_BASE_URL}/api/notify/${id}`;
}

function present(ctx: ApiContext, r: repo.TriggerRow): Trigger {
  return {
    id: r.id,
    project_id: r.project_id,
    name: r.name,
    default_message: r.default_message,
    integration_ids: r.integration_ids,
    token_protected: r.token_protected,
    token_hint: r.token_prefix ? `${r.token_prefix}…` : null,
    rate_limit: r.rate_limit_max !== null && r.rate_limit_per !== null ? { max: r.rate_limit_max, per: r.rate_limit_per } : null,
    active: r.active,
    url: triggerUrl(ctx, r.id),
    fire_count: Number(r.fire_count),
    last_fired_at: formatTimestamp(r.last_fired_at),
    created_at: formatTimestamp(r.created_at),
    updated_at: formatTimestamp(r.updated_at),
    project: { id: r.project_id, name: r.project_name, description: r.project_description },
  };
}

export async function listTriggers(ctx: ApiContext, p: Principal, projectId: string | undefined, page: PageQuery) {
  if (projectId) requireProject(p, projectId);
  const { rows, total } = await repo.listTriggers(ctx.sql, projectId ? [projectId] : [...p.projectIds], page);
  return { items: rows.map((r) => present(ctx, r)), total };
}

async function findOwn(ctx: ApiContext, p: Principal, id: string): Promise<repo.TriggerRow> {
  const row = await repo.findTrigger(ctx.sql, id, [...p.projectIds]);
  if (!row) throw notFound();
  return row;
}

export async function getTrigger(ctx: ApiContext, p: Principal, id: string): Promise<Trigger> {
  return present(ctx, await findOwn(ctx, p, id));
}

/** A protected trigger gets its token now; the answer is the only place it is ever shown. */
export async function createTrigger(ctx: ApiContext, p: Principal, body: TriggerCreateBody): Promise<Trigger & { token?: string }> {
  requireProject(p, body.project_id);
  await checkIntegrationIds(ctx.sql, body.project_id, body.integration_ids);
  const token = body.token_protected ? generateTriggerToken() : null;
  const write = {
    name: body.name,
    default_message: body.default_message,
    token_protected: body.token_protected,
    rate_limit_max: body.rate_limit?.max ?? null,
    rate_limit_per: body.rate_limit?.per ?? null,
    active: body.active,
  };
  const id = await ctx.sql.begin(async (tx) => {
    const id = await repo.insertTrigger(tx, body.project_id, write, token);
    await linkIntegrations(tx, { kind: 'trigger', id }, body.integration_ids);
    return id;
  });
  const trigger = await getTrigger(ctx, p, id);
  return token ? { ...trigger, token: token.token } : trigger;
}

export async function updateTrigger(ctx: ApiContext, p: Principal, id: string, body: TriggerUpdateBody): Promise<Trigger> {
  const current = await findOwn(ctx, p, id);
  await checkIntegrationIds(ctx.sql, current.project_id, body.integration_ids);
  const limit = body.rate_limit === undefined ? { max: current.rate_limit_max, per: current.rate_limit_per } : body.rate_limit;
  const write = {
    name: body.name ?? current.name,
    default_message: body.default_message ?? current.default_message,
    token_protected: body.token_protected ?? current.token_protected,
    rate_limit_max: limit?.max ?? null,
    rate_limit_per: limit?.per ?? null,
    active: body.active ?? current.active,
  };
  await ctx.sql.begin(async (tx) => {
    await repo.updateTrigger(tx, id, write);
    await linkIntegrations(tx, { kind: 'trigger', id }, body.integration_ids);
  });
  return getTrigger(ctx, p, id);
}

export async function deleteTrigger(ctx: ApiContext, p: Principal, id: string): Promise<void> {
  if (!(await repo.deleteTrigger(ctx.sql, id, [...p.projectIds]))) throw notFound();
}

/** A new token replaces the old one at once; protection itself is left as it is. */
export async function regenerateToken(ctx: ApiContext, p: Principal, id: string): Promise<Trigger & { token: string }> {
  await findOwn(ctx, p, id);
  const token = generateTriggerToken();
  await repo.setToken(ctx.sql, id, token);
  return { ...(await getTrigger(ctx, p, id)), token: token.token };
}

export async function listEvents(ctx: ApiContext, p: Principal, id: string, page: PageQuery) {
  await findOwn(ctx, p, id);
  const { rows, total } = await repo.listEvents(ctx.sql, id, page);
  const deliveries = await deliveriesOfEvents(
    ctx.sql,
    rows.map((r) => r.id),
  );
  const items: TriggerEventView[] = rows.map((r) => ({
    id: r.id,
    message: r.message,
    outcome: r.outcome,
    integrations: r.integrations,
    source_address: r.source_address,
    user_agent: r.user_agent,
    fired_at: formatTimestamp(r.fired_at),
    deliveries: deliveries.get(r.id) ?? [],
  }));
  return { items, total };
}
