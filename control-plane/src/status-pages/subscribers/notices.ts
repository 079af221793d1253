import type { DomainEvent } from '../../../../shared/src/contracts/events.ts';
import type { Db } from '../../platform/db/sql.ts';
import * as incidents from '../incidents/repo.ts';
import * as repo from './repo.ts';
import { incidentNoticesOwed, maintenanceConcernsPage, type NoticePayload, type PageShows } from './rules.ts';

const later = (a: string, b: string | null) => (b !== null && Date.parse(b) > Date.parse(a) ? b : a);

/**
 * Records the notices an incident owes its page's subscribers now (rules.ts
 * `incidentNoticesOwed`), in the caller's transaction: after any write that may publish it or add
 * to its timeline, by a person or by the drafter. Each update is noticed once whatever calls this
 * again. A notice is dated by its update (or the publication, when later): the subscribers
 * confirmed by then receive it. The notices recorded.
 */
export async function noticeIncident(tx: Db, pageId: string, incidentId: string): Promise<number> {
  const incident = await incidents.findIncident(tx, pageId, incidentId);
  if (!incident || incident.published_at === null) return 0;
  const updates = (await incidents.updatesOf(tx, [incidentId])).reverse();
  const noticed = await repo.noticedUpdates(tx, incidentId);
  const owed = incidentNoticesOwed(
    true,
    updates.map((u) => ({ id: u.id, at: new Date(u.at).toISOString() })),
    noticed,
  );
  if (owed.length === 0) return 0;
  const components = await repo.incidentComponentNames(tx, incidentId);
  let made = 0;
  for (const id of owed) {
    const u = updates.find((x) => x.id === id)!;
    const at = later(new Date(u.at).toISOString(), new Date(incident.published_at).toISOString());
    const payload: NoticePayload = {
      kind: 'incident',
      incident_id: incidentId,
      update_id: u.id,
      title: incident.title,
      impact: incident.impact,
      status: u.status,
      message: u.message,
      at: new Date(u.at).toISOString(),
      components,
      first: noticed.size === 0 && made === 0,
    };
    if (await repo.insertNotice(tx, pageId, `update:${u.id}`, payload, new Date(at))) made++;
  }
  return made;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const isoOrNull = (v: unknown): string | null => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? new Date(v).toISOString() : null);

/** A maintenance window as a notice tells it. */
export interface NoticedWindow {
  id: string;
  name: string;
  description: string;
  starts_at: string | null;
  ends_at: string | null;
  whole_project: boolean;
  monitor_ids: readonly string[];
  heartbeat_ids: readonly string[];
}

type Pages = Awaited<ReturnType<typeof repo.pagesOfProject>>;

/** Records one notice of a window on every page of the project showing what it covers; the notices recorded. */
async function noticeWindow(tx: Db, pages: Pages, w: NoticedWindow, phase: 'scheduled' | 'started' | 'ended', at: string): Promise<number> {
  let made = 0;
  for (const page of pages) {
    const shows: PageShows =
      page.monitors === null ? 'all' : { monitors: new Set(page.monitors), heartbeats: new Set(page.heartbeats ?? []) };
    if (!maintenanceConcernsPage(w, shows)) continue;
    let components: string[] = [];
    if (!w.whole_project) {
      const covered = [...w.monitor_ids, ...w.heartbeat_ids];
      const own = page.monitors === null ? await repo.subjectNames(tx, covered) : new Map(Object.entries(page.names));
      components = covered.map((id) => own.get(id)).filter((n): n is string => typeof n === 'string');
    }
    const payload: NoticePayload = {
      kind: 'maintenance',
      window_id: w.id,
      phase,
      name: w.name,
      description: w.description,
      starts_at: w.starts_at,
      ends_at: w.ends_at,
      at,
      components,
    };
    if (await repo.insertNotice(tx, page.id, `maintenance:${w.id}:${w.starts_at ?? at}:${phase}`, payload, new Date(at))) made++;
  }
  return made;
}

/**
 * Records the notices of maintenance windows starting and ending (maintenance.started and
 * maintenance.ended on EVENTS) on every page of the project that shows what a window covers, in
 * the caller's transaction. Keyed by window, occurrence and phase: a redelivered event adds
 * nothing. Dated by the event's own instant. The notices recorded.
 */
export async function noticeMaintenance(tx: Db, events: readonly DomainEvent[]): Promise<number> {
  let made = 0;
  const pagesByProject = new Map<string, Pages>();
  for (const e of events) {
    if (e.kind !== 'maintenance.started' && e.kind !== 'maintenance.ended') continue;
    let pages = pagesByProject.get(e.project_id);
    if (!pages) {
      pages = await repo.pagesOfProject(tx, e.project_id);
      pagesByProject.set(e.project_id, pages);
    }
    if (pages.length === 0) continue;
    const [described] = await tx<{ description: string }[]>`select description from maintenance_windows where id = ${e.subject.id}`;
    const at = new Date(e.occurred_at).toISOString();
    made += await noticeWindow(
      tx,
      pages,
      {
        id: e.subject.id,
        name: e.subject.name ?? 'Maintenance',
        description: described?.description ?? '',
        starts_at: isoOrNull(e.data.starts_at),
        ends_at: isoOrNull(e.data.ends_at),
        whole_project: e.data.whole_project === true,
        monitor_ids: strings(e.data.monitor_ids),
        heartbeat_ids: strings(e.data.heartbeat_ids),
      },
      e.kind === 'maintenance.started' ? 'started' : 'ended',
      at,
    );
  }
  return made;
}

/**
 * Records the notice of a one-off window scheduled ahead (created, or moved to another start), on
 * the pages showing what it covers, in the caller's transaction: keyed by its start, so an edit
 * that keeps the times tells nothing again. Recurring windows are told as each run starts and
 * ends. The notices recorded.
 */
export async function noticeScheduledMaintenance(
  tx: Db,
  projectId: string,
  w: NoticedWindow & { recurring: boolean; active: boolean },
  now: Date,
): Promise<number> {
  if (w.recurring || !w.active || w.starts_at === null || Date.parse(w.starts_at) <= now.getTime()) return 0;
  const pages = await repo.pagesOfProject(tx, projectId);
  if (pages.length === 0) return 0;
  return noticeWindow(tx, pages, w, 'scheduled', now.toISOString());
}
