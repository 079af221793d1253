import { seal } from '../../../../shared/src/crypto.ts';
import type { Principal } from '../../accounts/bearer.ts';
import { userDisplayName } from '../../accounts/service.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import type { ApiContext } from '../../platform/http/context.ts';
import type { PageQuery } from '../../platform/http/pagination.ts';
import { formatTimestamp } from '../../platform/http/time.ts';
import * as pages from '../repo.ts';
import { pageShowing } from '../service.ts';
import * as repo from './repo.ts';
import { confirmationDue, MAX_SUBSCRIBERS, MAX_WEBHOOKS, normalEmail } from './rules.ts';
import type { Subscriber, SubscriberCreateBody } from './schemas.ts';

/**
 * Subscribers of status pages (docs/status-pages.md, "Subscribers"; ADR 0042): added by the
 * project through the API, MCP and dashboard, and by visitors of a page through its subscribe form
 * (email only, double opt-in). Confirming and unsubscribing go through signed links (links.ts).
 */

const invalid = (field: string, message: string, code: 'VALIDATION' | 'CONFLICT' = 'VALIDATION') =>
  new AppError(code, message, { [field]: [message] });

async function views(ctx: ApiContext, rows: readonly repo.SubscriberRecord[]): Promise<Subscriber[]> {
  const counts = await repo.deliveryCounts(
    ctx.sql,
    rows.map((r) => r.id),
  );
  return rows.map((r) => {
    const c = counts.get(r.id);
    return {
      id: r.id,
      status_page_id: r.status_page_id,
      type: r.kind,
      email: r.email,
      webhook_host: r.webhook_host,
      webhook_secret_set: r.webhook_signed,
      confirmed: r.confirmed_at !== null,
      confirmed_at: formatTimestamp(r.confirmed_at),
      added_by: r.added_by,
      delivered: c?.delivered ?? 0,
      failed: c?.failed ?? 0,
      last_error: c?.last_error ?? null,
      created_at: formatTimestamp(r.created_at)!,
    };
  });
}

export async function listSubscribers(
  ctx: ApiContext,
  p: Principal,
  pageId: string,
  q: PageQuery,
  filter: { type?: 'email' | 'webhook' | undefined; confirmed?: boolean | undefined },
): Promise<{ items: Subscriber[]; total: number }> {
  const { page } = await pageShowing(ctx, p, pageId);
  const { rows, total } = await repo.listSubscribers(ctx.sql, page.id, q, { kind: filter.type, confirmed: filter.confirmed });
  return { items: await views(ctx, rows), total };
}

async function found(ctx: ApiContext, p: Principal, pageId: string, id: string): Promise<repo.SubscriberRecord> {
  const { page } = await pageShowing(ctx, p, pageId);
  const s = await repo.findSubscriber(ctx.sql, id);
  if (!s || s.status_page_id !== page.id) throw notFound();
  return s;
}

export async function getSubscriber(ctx: ApiContext, p: Principal, pageId: string, id: string): Promise<Subscriber> {
  return (await views(ctx, [await found(ctx, p, pageId, id)]))[0]!;
}

/**
 * Adds a subscriber. An email address is never subscribed on anyone's word but its owner's: it
 * gets a confirmation email and nothing else until it is confirmed. A webhook is active at once.
 */
export async function addSubscriber(ctx: ApiContext, p: Principal, pageId: string, body: SubscriberCreateBody): Promise<Subscriber> {
  const { page } = await pageShowing(ctx, p, pageId);
  const by = await userDisplayName(ctx.sql, p.userId);
  const now = ctx.now();
  if (body.type === 'email' && !ctx.config.SMTP_URL)
    throw invalid('type', 'Email subscribers need an SMTP server: set SMTP_URL on the control plane.');
  const row = await ctx.sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext('status_page_subscribers'), hashtext(${page.id}))`;
    if ((await repo.countSubscribers(tx, page.id)) >= MAX_SUBSCRIBERS)
      throw invalid('type', `A status page has at most ${MAX_SUBSCRIBERS} subscribers.`);
    if (body.type === 'webhook') {
      if ((await repo.countSubscribers(tx, page.id, 'webhook')) >= MAX_WEBHOOKS)
        throw invalid('url', `A status page has at most ${MAX_WEBHOOKS} webhook subscribers.`);
      const sealed = seal(JSON.stringify({ url: body.url, ...(body.secret ? { secret: body.secret } : {}) }), ctx.keys.integrationSecrets);
      return repo.insertWebhookSubscriber(tx, page.id, sealed, new URL(body.url).host, body.secret !== undefined, by, now);
    }
    const email = body.email.trim();
    const s = await repo.emailSubscriber(tx, page.id, email, by);
    // New: never asked to confirm yet.
    if (s.confirmation_sent_at === null && s.confirmed_at === null) {
      await repo.queueConfirmation(tx, s.id, now);
      return s;
    }
    throw invalid(
      'email',
      s.confirmed_at ? 'This address is already subscribed to the page.' : 'This address was already asked to confirm its subscription.',
      'CONFLICT',
    );
  });
  return (await views(ctx, [(await repo.findSubscriber(ctx.sql, row.id))!]))[0]!;
}

export async function removeSubscriber(ctx: ApiContext, p: Principal, pageId: string, id: string): Promise<void> {
  const s = await found(ctx, p, pageId, id);
  await repo.deleteSubscriber(ctx.sql, s.id);
}

// ---- what visitors of a page do

/** Whether a page takes subscriptions from its visitors: it exists, and email can be sent. */
export function emailSubscriptionsOpen(ctx: ApiContext): boolean {
  return Boolean(ctx.config.SMTP_URL);
}

export type SubscribeOutcome = 'no-page' | 'closed' | 'invalid' | 'full' | 'accepted';

/**
 * A visitor asks for a page's updates by email. The answer is the same whether the address was
 * new, waiting or already confirmed (an address's subscription is nobody else's business); a
 * confirmation goes when it is new or waiting and none was sent in the last minutes.
 */
export async function subscribeByEmail(ctx: ApiContext, slug: string, raw: string): Promise<SubscribeOutcome> {
  const page = await pages.findPageBySlug(ctx.sql, slug);
  if (!page) return 'no-page';
  if (!emailSubscriptionsOpen(ctx)) return 'closed';
  if (normalEmail(raw) === null) return 'invalid';
  const now = ctx.now();
  return ctx.sql.begin(async (tx) => {
    const s = await repo.emailSubscriber(tx, page.id, raw.trim(), null);
    if (s.confirmed_at !== null) return 'accepted';
    if ((await repo.countSubscribers(tx, page.id)) > MAX_SUBSCRIBERS) {
      if (s.confirmation_sent_at === null) await repo.deleteSubscriber(tx, s.id);
      return 'full';
    }
    if (confirmationDue(s.confirmation_sent_at ? new Date(s.confirmation_sent_at) : null, now)) await repo.queueConfirmation(tx, s.id, now);
    return 'accepted';
  });
}

/** The page a subscriber is of, for the confirm and unsubscribe pages; undefined when it is gone. */
export async function subscriberPage(
  ctx: ApiContext,
  id: string,
): Promise<{ subscriber: repo.SubscriberRecord; title: string; slug: string } | undefined> {
  const s = await repo.findSubscriber(ctx.sql, id);
  if (!s) return undefined;
  const [page] = await ctx.sql<{ title: string; slug: string }[]>`select title, slug from status_pages where id = ${s.status_page_id}`;
  return page ? { subscriber: s, ...page } : undefined;
}

/** Confirms a subscription (its signed link was checked); false when it is gone. */
export async function confirmSubscription(ctx: ApiContext, id: string): Promise<boolean> {
  if (await repo.confirmSubscriber(ctx.sql, id, ctx.now())) return true;
  return (await repo.findSubscriber(ctx.sql, id)) !== undefined;
}

/** Ends a subscription (its signed link was checked); whether there was one. */
export function unsubscribe(ctx: ApiContext, id: string): Promise<boolean> {
  return repo.deleteSubscriber(ctx.sql, id);
}
