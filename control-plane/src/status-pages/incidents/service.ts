import type { Principal } from '../../accounts/bearer.ts';
import { userDisplayName } from '../../accounts/service.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import type { ApiContext } from '../../platform/http/context.ts';
import type { PageQuery } from '../../platform/http/pagination.ts';
import { formatTimestamp } from '../../platform/http/time.ts';
import type { IncidentImpact } from '../overall.ts';
import type { StatusPageComponent } from '../schemas.ts';
import { pageShowing } from '../service.ts';
import * as repo from './repo.ts';
import { noticeIncident } from '../subscribers/notices.ts';
import { draftTexts, type IncidentStatus } from './rules.ts';
import {
  MAX_UPDATES,
  type IncidentComponentRef,
  type IncidentUpdatePostBody,
  type StatusPageIncident,
  type StatusPageIncidentCreateBody,
  type StatusPageIncidentUpdateBody,
} from './schemas.ts';

/**
 * Incidents written on a status page (docs/status-pages.md, "Incidents"): a title, an impact, a
 * status moved by dated updates, the components it affects and a postmortem; drafts until
 * published. Drafts made from outages come from drafter.ts; everything here is what people do.
 */

const invalid = (field: string, message: string) => new AppError('VALIDATION', message, { [field]: [message] });

const keyOf = (c: { type: string; id: string }) => `${c.type}:${c.id}`;

/** The names a page shows its components by, keyed `type:id`. */
export type ShownNames = ReadonlyMap<string, string>;

export const namesOf = (shown: readonly StatusPageComponent[]): ShownNames =>
  new Map(shown.map((c) => [keyOf(c), c.display_name ?? c.name]));

async function views(ctx: ApiContext, incidents: readonly repo.IncidentRecord[], names: ShownNames): Promise<StatusPageIncident[]> {
  const ids = incidents.map((i) => i.id);
  const [updates, components] = await Promise.all([repo.updatesOf(ctx.sql, ids), repo.componentsOf(ctx.sql, ids)]);
  return incidents.map((i) => {
    const own = components.filter((c) => c.incident_id === i.id);
    const sourceType = i.source_key?.startsWith('heartbeat:') ? 'heartbeat' : 'monitor';
    const sourceName = names.get(`${sourceType}:${i.source_monitor_id ?? i.source_heartbeat_id}`);
    const suggested =
      i.source_ended_at !== null && i.status !== 'resolved'
        ? { status: 'resolved' as const, message: draftTexts(sourceName ?? 'The service').resolved }
        : null;
    return {
      id: i.id,
      status_page_id: i.status_page_id,
      title: i.title,
      impact: i.impact,
      status: i.status,
      published: i.published_at !== null,
      published_at: formatTimestamp(i.published_at),
      components: own.map((c) => ({ type: c.type, id: c.subject_id, name: names.get(`${c.type}:${c.subject_id}`) ?? null })),
      updates: updates
        .filter((u) => u.incident_id === i.id)
        .map((u) => ({ id: u.id, status: u.status, message: u.message, at: formatTimestamp(u.at), by: u.posted_by })),
      postmortem: i.postmortem,
      postmortem_published: i.postmortem_published_at !== null,
      postmortem_published_at: formatTimestamp(i.postmortem_published_at),
      source:
        i.source_key === null
          ? null
          : {
              type: sourceType,
              id: i.source_monitor_id ?? i.source_heartbeat_id,
              monitor_incident_id: sourceType === 'monitor' ? i.source_key.slice('monitor:'.length) : null,
              ended_at: formatTimestamp(i.source_ended_at),
            },
      suggested_update: suggested,
      created_at: formatTimestamp(i.created_at),
      updated_at: formatTimestamp(i.updated_at),
      resolved_at: formatTimestamp(i.resolved_at),
    };
  });
}

/** The components given, each a component the page shows and each once (422 naming the one that is not). */
function checkComponents(refs: readonly IncidentComponentRef[], names: ShownNames): IncidentComponentRef[] {
  const seen = new Set<string>();
  for (const [i, c] of refs.entries()) {
    if (seen.has(keyOf(c))) throw invalid(`components.${i}.id`, `This ${c.type} is named already: name each component once.`);
    if (!names.has(keyOf(c))) throw invalid(`components.${i}.id`, `Not a ${c.type} this status page shows: ${c.id}.`);
    seen.add(keyOf(c));
  }
  return [...refs];
}

async function one(ctx: ApiContext, incident: repo.IncidentRecord, names: ShownNames): Promise<StatusPageIncident> {
  return (await views(ctx, [incident], names))[0]!;
}

async function found(ctx: ApiContext, pageId: string, id: string): Promise<repo.IncidentRecord> {
  const i = await repo.findIncident(ctx.sql, pageId, id);
  if (!i) throw notFound();
  return i;
}

export async function listIncidents(
  ctx: ApiContext,
  p: Principal,
  pageId: string,
  filter: { status?: 'open' | 'resolved' | undefined },
  q: PageQuery,
): Promise<{ items: StatusPageIncident[]; total: number }> {
  const { page, shown } = await pageShowing(ctx, p, pageId);
  const { items, total } = await repo.listIncidents(ctx.sql, page.id, filter, q);
  return { items: await views(ctx, items, namesOf(shown)), total };
}

export async function getIncident(ctx: ApiContext, p: Principal, pageId: string, id: string): Promise<StatusPageIncident> {
  const { page, shown } = await pageShowing(ctx, p, pageId);
  return one(ctx, await found(ctx, page.id, id), namesOf(shown));
}

export async function createIncident(
  ctx: ApiContext,
  p: Principal,
  pageId: string,
  body: StatusPageIncidentCreateBody,
): Promise<StatusPageIncident> {
  const { page, shown } = await pageShowing(ctx, p, pageId);
  const names = namesOf(shown);
  const components = checkComponents(body.components, names);
  const by = await userDisplayName(ctx.sql, p.userId);
  const now = ctx.now();
  const id = await ctx.sql.begin(async (tx) => {
    const id = await repo.insertIncident(
      tx,
      page.id,
      {
        title: body.title,
        impact: body.impact,
        status: body.status,
        published_at: body.published ? now : null,
        published_by: body.published ? by : null,
        resolved_at: body.status === 'resolved' ? now : null,
      },
      now,
    );
    await repo.insertUpdate(tx, id, { status: body.status, message: body.message, at: now, posted_by: by });
    await repo.replaceComponents(tx, id, components);
    await noticeIncident(tx, page.id, id);
    return id;
  });
  return one(ctx, await found(ctx, page.id, id), names);
}

export async function updateIncident(
  ctx: ApiContext,
  p: Principal,
  pageId: string,
  id: string,
  body: StatusPageIncidentUpdateBody,
): Promise<StatusPageIncident> {
  const { page, shown } = await pageShowing(ctx, p, pageId);
  const names = namesOf(shown);
  const components = body.components && checkComponents(body.components, names);
  const by = await userDisplayName(ctx.sql, p.userId);
  const now = ctx.now();
  await ctx.sql.begin(async (tx) => {
    const i = await repo.findIncident(tx, page.id, id, true);
    if (!i) throw notFound();
    const postmortem = body.postmortem ?? i.postmortem;
    if (body.postmortem_published && postmortem.trim() === '')
      throw invalid('postmortem_published', 'There is no postmortem to publish: write it first (postmortem).');
    const published = body.published ?? i.published_at !== null;
    const postmortemPublished = body.postmortem_published ?? (i.postmortem_published_at !== null && postmortem.trim() !== '');
    await repo.editIncident(
      tx,
      i.id,
      {
        title: body.title ?? i.title,
        impact: body.impact ?? i.impact,
        published_at: published ? (i.published_at ?? now.toISOString()) : null,
        published_by: published ? (i.published_at === null ? by : i.published_by) : null,
        postmortem,
        postmortem_published_at: postmortemPublished ? (i.postmortem_published_at ?? now.toISOString()) : null,
      },
      now,
    );
    if (components) await repo.replaceComponents(tx, i.id, components);
    await noticeIncident(tx, page.id, i.id);
  });
  return one(ctx, await found(ctx, page.id, id), names);
}

export async function deleteIncident(ctx: ApiContext, p: Principal, pageId: string, id: string): Promise<void> {
  const { page } = await pageShowing(ctx, p, pageId);
  await repo.deleteIncident(ctx.sql, (await found(ctx, page.id, id)).id);
}

/** Adds an update to the timeline and moves the incident to its status (resolved sets resolved_at; any other reopens it). */
export async function postIncidentUpdate(
  ctx: ApiContext,
  p: Principal,
  pageId: string,
  id: string,
  body: IncidentUpdatePostBody,
): Promise<StatusPageIncident> {
  const { page, shown } = await pageShowing(ctx, p, pageId);
  const by = await userDisplayName(ctx.sql, p.userId);
  const now = ctx.now();
  await ctx.sql.begin(async (tx) => {
    const i = await repo.findIncident(tx, page.id, id, true);
    if (!i) throw notFound();
    if ((await repo.countUpdates(tx, i.id)) >= MAX_UPDATES)
      throw invalid('message', `An incident holds at most ${MAX_UPDATES} updates: write a new incident.`);
    await repo.insertUpdate(tx, i.id, { status: body.status, message: body.message, at: now, posted_by: by });
    await repo.moveStatus(tx, i.id, body.status, now);
    await noticeIncident(tx, page.id, i.id);
  });
  return one(ctx, await found(ctx, page.id, id), namesOf(shown));
}

/** An incident as the public page shows it: nothing of who wrote it, nothing of a component the page does not show. */
export interface PublicIncident {
  id: string;
  title: string;
  impact: IncidentImpact;
  status: IncidentStatus;
  created_at: string;
  resolved_at: string | null;
  /** The names of the components it affects, as the page shows them. */
  components: string[];
  /** The same components as `type:id`, for rules over what the page shows; never shown. */
  component_keys: string[];
  /** Newest first. */
  updates: { status: IncidentStatus; message: string; at: string }[];
  /** Markdown; null unless published. */
  postmortem: string | null;
  /** The monitor's outage it was drafted from (the page shows that outage as this incident); never shown. */
  monitor_incident_id: string | null;
}

async function publicViews(ctx: ApiContext, incidents: readonly repo.IncidentRecord[], names: ShownNames): Promise<PublicIncident[]> {
  return (await views(ctx, incidents, names)).map((i) => ({
    id: i.id,
    title: i.title,
    impact: i.impact,
    status: i.status,
    created_at: i.created_at,
    resolved_at: i.resolved_at,
    components: i.components.map((c) => c.name).filter((n): n is string => n !== null),
    component_keys: i.components.filter((c) => c.name !== null).map(keyOf),
    updates: i.updates.map((u) => ({ status: u.status, message: u.message, at: u.at })),
    postmortem: i.postmortem_published && i.postmortem.trim() !== '' ? i.postmortem : null,
    monitor_incident_id: i.source?.monitor_incident_id ?? null,
  }));
}

/** How long a resolved incident stays on the page itself (then in its history). */
export const RECENT_DAYS = 7;

/** A page's published incidents: ongoing ones, and those resolved within RECENT_DAYS, newest first. */
export async function publicIncidents(
  ctx: ApiContext,
  pageId: string,
  names: ShownNames,
  now: Date,
): Promise<{ ongoing: PublicIncident[]; recent: PublicIncident[] }> {
  const all = await publicViews(
    ctx,
    await repo.publishedCurrent(ctx.sql, pageId, new Date(now.getTime() - RECENT_DAYS * 86_400_000)),
    names,
  );
  return { ongoing: all.filter((i) => i.resolved_at === null), recent: all.filter((i) => i.resolved_at !== null) };
}

/** How many incidents a page's feeds hold. */
export const FEED_INCIDENTS = 50;

/** A page's latest published incidents, newest first: what its feeds hold. */
export async function publicLatest(ctx: ApiContext, pageId: string, names: ShownNames, limit = FEED_INCIDENTS): Promise<PublicIncident[]> {
  return publicViews(ctx, await repo.publishedLatest(ctx.sql, pageId, limit), names);
}

/** A page's published incidents begun in a month (UTC), newest first. */
export async function publicMonth(
  ctx: ApiContext,
  pageId: string,
  names: ShownNames,
  year: number,
  month: number,
): Promise<PublicIncident[]> {
  const from = new Date(Date.UTC(year, month - 1, 1));
  const to = new Date(Date.UTC(year, month, 1));
  return publicViews(ctx, await repo.publishedBetween(ctx.sql, pageId, from, to), names);
}

/** One published incident of a page; undefined for a draft or another page's. */
export async function publicIncident(ctx: ApiContext, pageId: string, names: ShownNames, id: string): Promise<PublicIncident | undefined> {
  const i = await repo.findIncident(ctx.sql, pageId, id);
  if (!i || i.published_at === null) return undefined;
  return (await publicViews(ctx, [i], names))[0];
}
