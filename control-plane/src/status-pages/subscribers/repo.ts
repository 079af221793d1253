import { arrayLiteral, type Db, type Sql } from '../../platform/db/sql.ts';
import { offsetOf, type PageQuery } from '../../platform/http/pagination.ts';
import type { NoticePayload } from './rules.ts';

/** A status_page_subscribers row (the sealed webhook left out); timestamps are Postgres text. */
export interface SubscriberRecord {
  id: string;
  status_page_id: string;
  kind: 'email' | 'webhook';
  email: string | null;
  webhook_host: string | null;
  webhook_signed: boolean;
  confirmed_at: string | null;
  confirmation_sent_at: string | null;
  added_by: string | null;
  created_at: string;
}

const columns = (db: Db) => db`
  id, status_page_id, kind, email, webhook_host, webhook_signed, confirmed_at, confirmation_sent_at, added_by, created_at`;

export async function listSubscribers(
  db: Db,
  pageId: string,
  q: PageQuery,
  filter: { kind?: 'email' | 'webhook' | undefined; confirmed?: boolean | undefined },
): Promise<{ rows: SubscriberRecord[]; total: number }> {
  const kind = filter.kind ? db`and kind = ${filter.kind}` : db``;
  const confirmed =
    filter.confirmed === undefined ? db`` : filter.confirmed ? db`and confirmed_at is not null` : db`and confirmed_at is null`;
  const [rows, [count]] = await Promise.all([
    db<SubscriberRecord[]>`
      select ${columns(db)} from status_page_subscribers where status_page_id = ${pageId} ${kind} ${confirmed}
      order by created_at, id limit ${q.per_page} offset ${offsetOf(q)}`,
    db<{ n: number }[]>`select count(*)::int as n from status_page_subscribers where status_page_id = ${pageId} ${kind} ${confirmed}`,
  ]);
  return { rows, total: count!.n };
}

export async function findSubscriber(db: Db, id: string): Promise<SubscriberRecord | undefined> {
  const [row] = await db<SubscriberRecord[]>`select ${columns(db)} from status_page_subscribers where id = ${id}`;
  return row;
}

export async function countSubscribers(db: Db, pageId: string, kind?: 'email' | 'webhook'): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::int as n from status_page_subscribers where status_page_id = ${pageId} ${kind ? db`and kind = ${kind}` : db``}`;
  return row!.n;
}

/** The page's subscriber with this address (any case), or a new unconfirmed one. */
export async function emailSubscriber(tx: Db, pageId: string, email: string, addedBy: string | null): Promise<SubscriberRecord> {
  const [inserted] = await tx<SubscriberRecord[]>`
    insert into status_page_subscribers (status_page_id, kind, email, added_by)
    values (${pageId}, 'email', ${email}, ${addedBy})
    on conflict (status_page_id, lower(email)) where email is not null do nothing
    returning ${columns(tx)}`;
  if (inserted) return inserted;
  const [existing] = await tx<SubscriberRecord[]>`
    select ${columns(tx)} from status_page_subscribers where status_page_id = ${pageId} and lower(email) = lower(${email}) for update`;
  return existing!;
}

export async function insertWebhookSubscriber(
  tx: Db,
  pageId: string,
  sealed: string,
  host: string,
  signed: boolean,
  addedBy: string | null,
  now: Date,
): Promise<SubscriberRecord> {
  const [row] = await tx<SubscriberRecord[]>`
    insert into status_page_subscribers (status_page_id, kind, webhook_sealed, webhook_host, webhook_signed, confirmed_at, added_by)
    values (${pageId}, 'webhook', ${sealed}, ${host}, ${signed}, ${now}, ${addedBy})
    returning ${columns(tx)}`;
  return row!;
}

/** Queues a confirmation email for this subscriber (one per request: the key holds when it was asked). */
export async function queueConfirmation(tx: Db, id: string, now: Date): Promise<void> {
  await tx`update status_page_subscribers set confirmation_sent_at = ${now} where id = ${id}`;
  await tx`
    insert into subscriber_deliveries (subscriber_id, purpose, dedupe_key)
    values (${id}, 'confirm', ${`confirm:${id}:${now.toISOString()}`})
    on conflict (dedupe_key) do nothing`;
}

/** Confirms an email subscriber; whether it was waiting (false: confirmed before, or gone). */
export async function confirmSubscriber(db: Db, id: string, now: Date): Promise<boolean> {
  const rows = await db`update status_page_subscribers set confirmed_at = ${now} where id = ${id} and confirmed_at is null returning 1`;
  return rows.length > 0;
}

export async function deleteSubscriber(db: Db, id: string): Promise<boolean> {
  const rows = await db`delete from status_page_subscribers where id = ${id} returning 1`;
  return rows.length > 0;
}

/** Forgets addresses never confirmed, asked for before the cutoff (retention); how many. */
export async function prunePendingSubscribers(sql: Sql, cutoff: string, limit: number): Promise<number> {
  const { count } = await sql`
    delete from status_page_subscribers where id = any(array(
      select id from status_page_subscribers where confirmed_at is null and created_at < ${cutoff} limit ${limit}))`;
  return count;
}

/**
 * Forgets notices made before the cutoff once every delivery of theirs is finished (their
 * deliveries go with them), and finished confirmation emails (retention); how many rows.
 */
export async function pruneNotices(sql: Sql, cutoff: string, limit: number): Promise<number> {
  const notices = await sql`
    delete from status_page_notices where id = any(array(
      select n.id from status_page_notices n where n.created_at < ${cutoff} and n.fanned_out_at is not null
        and not exists (select 1 from subscriber_deliveries d where d.notice_id = n.id and d.status in ('pending', 'sending'))
      limit ${limit}))`;
  const confirmations = await sql`
    delete from subscriber_deliveries where id = any(array(
      select id from subscriber_deliveries where purpose = 'confirm' and created_at < ${cutoff} and status in ('delivered', 'dead') limit ${limit}))`;
  return notices.count + confirmations.count;
}

// ---- notices

/** The updates of an incident already noticed on its page. */
export async function noticedUpdates(db: Db, incidentId: string): Promise<Set<string>> {
  const rows = await db<{ update_id: string }[]>`
    select payload ->> 'update_id' as update_id from status_page_notices
    where kind = 'incident' and payload ->> 'incident_id' = ${incidentId}`;
  return new Set(rows.map((r) => r.update_id));
}

/** Records a notice once per source; whether this call did. */
export async function insertNotice(tx: Db, pageId: string, sourceKey: string, payload: NoticePayload, at: Date): Promise<boolean> {
  const rows = await tx`
    insert into status_page_notices (status_page_id, source_key, kind, payload, created_at)
    values (${pageId}, ${sourceKey}, ${payload.kind}, ${tx.json(payload as never)}, ${at})
    on conflict (status_page_id, source_key) do nothing returning 1`;
  return rows.length > 0;
}

/** The names an incident's components have on its page (display name, else their own). */
export async function incidentComponentNames(db: Db, incidentId: string): Promise<string[]> {
  const rows = await db<{ name: string }[]>`
    select coalesce(nullif(pc.display_name, ''), m.name, h.name) as name
    from status_page_incident_components c
    join status_page_incidents i on i.id = c.incident_id
    left join monitors m on m.id = c.monitor_id
    left join heartbeats h on h.id = c.heartbeat_id
    left join status_page_components pc on pc.status_page_id = i.status_page_id
      and (pc.monitor_id = c.monitor_id or pc.heartbeat_id = c.heartbeat_id)
    where c.incident_id = ${incidentId}
    order by c.position`;
  return rows.map((r) => r.name).filter((n): n is string => typeof n === 'string');
}

/** The pages of a project with what each shows: null when it shows everything (no groups). */
export async function pagesOfProject(
  db: Db,
  projectId: string,
): Promise<{ id: string; monitors: string[] | null; heartbeats: string[] | null; names: Record<string, string> }[]> {
  return db`
    select p.id,
      case when exists (select 1 from status_page_groups g where g.status_page_id = p.id) then
        coalesce((select array_agg(c.monitor_id::text) from status_page_components c where c.status_page_id = p.id and c.monitor_id is not null), '{}')
      end as monitors,
      case when exists (select 1 from status_page_groups g where g.status_page_id = p.id) then
        coalesce((select array_agg(c.heartbeat_id::text) from status_page_components c where c.status_page_id = p.id and c.heartbeat_id is not null), '{}')
      end as heartbeats,
      coalesce((
        select jsonb_object_agg(coalesce(c.monitor_id, c.heartbeat_id)::text, coalesce(nullif(c.display_name, ''), m.name, h.name))
        from status_page_components c left join monitors m on m.id = c.monitor_id left join heartbeats h on h.id = c.heartbeat_id
        where c.status_page_id = p.id), '{}') as names
    from status_pages p where p.project_id = ${projectId} order by p.id`;
}

/** The own names of these monitors and heartbeats (for a page showing everything). */
export async function subjectNames(db: Db, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db<{ id: string; name: string }[]>`
    select id::text, name from monitors where id = any(${arrayLiteral(ids)}::uuid[])
    union all select id::text, name from heartbeats where id = any(${arrayLiteral(ids)}::uuid[])`;
  return new Map(rows.map((r) => [r.id, r.name]));
}

// ---- the queue

/**
 * Fans out up to `limit` notices: one delivery per subscriber confirmed when the notice was made,
 * and the notice marked, in one transaction (a repeat adds nothing: dedupe_key).
 */
export async function fanOut(sql: Sql, limit: number): Promise<{ notices: number; deliveries: number }> {
  return sql.begin(async (tx) => {
    const due = await tx<{ id: string; status_page_id: string; created_at: string }[]>`
      select id, status_page_id, created_at from status_page_notices where fanned_out_at is null
      order by created_at limit ${limit} for update skip locked`;
    if (due.length === 0) return { notices: 0, deliveries: 0 };
    let made = 0;
    for (const n of due) {
      const rows = await tx`
        insert into subscriber_deliveries (subscriber_id, notice_id, purpose, dedupe_key)
        select s.id, ${n.id}, 'notice', 'notice:' || ${n.id}::text || ':' || s.id::text
        from status_page_subscribers s
        where s.status_page_id = ${n.status_page_id} and s.confirmed_at is not null and s.confirmed_at <= ${n.created_at}
        on conflict (dedupe_key) do nothing returning 1`;
      made += rows.length;
    }
    await tx`update status_page_notices set fanned_out_at = now() where id = any(${arrayLiteral(due.map((n) => n.id))}::uuid[])`;
    return { notices: due.length, deliveries: made };
  });
}

/** A claimed delivery with what sending it needs. */
export interface ClaimedMessage {
  id: string;
  attempts: number;
  purpose: 'notice' | 'confirm';
  subscriber_id: string;
  kind: 'email' | 'webhook';
  email: string | null;
  webhook_sealed: string | null;
  notice_id: string | null;
  payload: NoticePayload | null;
  page_title: string;
  page_slug: string;
  page_domain: string | null;
}

export async function claimDue(sql: Sql, limit: number, leaseMs: number): Promise<ClaimedMessage[]> {
  return sql<ClaimedMessage[]>`
    update subscriber_deliveries d set status = 'sending', attempts = d.attempts + 1, updated_at = now(),
      claimed_until = now() + ${leaseMs} * interval '1 millisecond'
    from (
      select id from subscriber_deliveries
      where (status = 'pending' and next_attempt_at <= now()) or (status = 'sending' and claimed_until < now())
      order by next_attempt_at limit ${limit}
      for update skip locked
    ) due, status_page_subscribers s, status_pages p
    where d.id = due.id and s.id = d.subscriber_id and p.id = s.status_page_id
    returning d.id, d.attempts, d.purpose, s.id as subscriber_id, s.kind, s.email, s.webhook_sealed, d.notice_id,
      (select payload from status_page_notices n where n.id = d.notice_id) as payload,
      p.title as page_title, p.slug as page_slug, p.custom_domain as page_domain`;
}

export async function markDelivered(sql: Db, ids: readonly string[]): Promise<void> {
  await sql`
    update subscriber_deliveries set status = 'delivered', delivered_at = now(), claimed_until = null, updated_at = now()
    where id = any(${arrayLiteral(ids)}::uuid[]) and status = 'sending'`;
}

export async function markRetry(sql: Db, id: string, attempt: number, error: string, delayMs: number): Promise<void> {
  await sql`
    update subscriber_deliveries set status = 'pending', last_error = ${error}, claimed_until = null, updated_at = now(),
      next_attempt_at = now() + ${delayMs} * interval '1 millisecond'
    where id = ${id} and status = 'sending' and attempts = ${attempt}`;
}

export async function markDead(sql: Db, id: string, attempt: number, error: string): Promise<void> {
  await sql`
    update subscriber_deliveries set status = 'dead', last_error = ${error}, claimed_until = null, updated_at = now()
    where id = ${id} and status = 'sending' and attempts = ${attempt}`;
}

/** Delivery counts of a page's subscribers by status (the dashboard's and the API's summary). */
export async function deliveryCounts(
  db: Db,
  subscriberIds: readonly string[],
): Promise<Map<string, { delivered: number; failed: number; last_error: string | null }>> {
  if (subscriberIds.length === 0) return new Map();
  const rows = await db<{ subscriber_id: string; delivered: number; failed: number; last_error: string | null }[]>`
    select subscriber_id, count(*) filter (where status = 'delivered')::int as delivered,
      count(*) filter (where status = 'dead')::int as failed,
      (array_agg(last_error order by updated_at desc) filter (where last_error is not null))[1] as last_error
    from subscriber_deliveries where subscriber_id = any(${arrayLiteral(subscriberIds)}::uuid[]) group by subscriber_id`;
  return new Map(rows.map((r) => [r.subscriber_id, r]));
}
