/**
 * The rules of a status page's subscribers, as pure functions (docs/status-pages.md,
 * "Subscribers"; ADR 0042): which incident updates become notices, which maintenance a page
 * tells of, when another confirmation email may go, and what every message says.
 */
import { impactWords, statusWords, type IncidentStatus } from '../incidents/rules.ts';
import type { IncidentImpact } from '../overall.ts';

/** A confirmation email is sent again for the same address only after this long. */
export const CONFIRMATION_RESEND_MS = 10 * 60_000;
/** An address not confirmed within this long is forgotten (retention). */
export const PENDING_DAYS = 7;
/** Subscribers of one page at most (email and webhook together). */
export const MAX_SUBSCRIBERS = 100_000;
/** Webhook subscribers of one page at most: they are added by the project, not by visitors. */
export const MAX_WEBHOOKS = 100;

/** One update on an incident's timeline, oldest first as the rule reads them. */
export interface TimelineUpdate {
  id: string;
  at: string;
}

/**
 * The updates of an incident that are owed a notice now. None while it is a draft. Published with
 * no notice sent yet, only its latest update (the incident as it stands: a draft made public with
 * three updates tells subscribers once, not three times). Afterwards, every update newer than the
 * newest one noticed. An update noticed before is never owed again (unpublishing and publishing
 * again sends nothing already sent).
 */
export function incidentNoticesOwed(published: boolean, updates: readonly TimelineUpdate[], noticed: ReadonlySet<string>): string[] {
  if (!published || updates.length === 0) return [];
  const ordered = [...updates].sort((a, b) => Date.parse(a.at) - Date.parse(b.at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  let newest = -1;
  ordered.forEach((u, i) => {
    if (noticed.has(u.id)) newest = i;
  });
  if (newest === -1) return [ordered[ordered.length - 1]!.id];
  return ordered.slice(newest + 1).map((u) => u.id);
}

/** What a page shows: everything of its project (no groups), or these monitors and heartbeats. */
export type PageShows = 'all' | { monitors: ReadonlySet<string>; heartbeats: ReadonlySet<string> };

/** A maintenance window as its event tells it. */
export interface WindowCoverage {
  whole_project: boolean;
  monitor_ids: readonly string[];
  heartbeat_ids: readonly string[];
}

/**
 * Whether a page tells its subscribers of a window: it covers the whole project, or something the
 * page shows (a page showing everything shows whatever the window names).
 */
export function maintenanceConcernsPage(w: WindowCoverage, shows: PageShows): boolean {
  if (w.whole_project) return true;
  if (shows === 'all') return w.monitor_ids.length + w.heartbeat_ids.length > 0;
  return w.monitor_ids.some((id) => shows.monitors.has(id)) || w.heartbeat_ids.some((id) => shows.heartbeats.has(id));
}

/** Whether a confirmation email goes now for an address that asked before (null: never sent). */
export function confirmationDue(lastSentAt: Date | null, now: Date): boolean {
  return lastSentAt === null || now.getTime() - lastSentAt.getTime() >= CONFIRMATION_RESEND_MS;
}

/** What a notice says, fixed when it is made (status_page_notices.payload). */
export type NoticePayload =
  | {
      kind: 'incident';
      incident_id: string;
      update_id: string;
      title: string;
      impact: IncidentImpact;
      status: IncidentStatus;
      message: string;
      at: string;
      /** The affected components by the names the page shows. */
      components: string[];
      /** The first notice of this incident (its publication). */
      first: boolean;
    }
  | {
      kind: 'maintenance';
      window_id: string;
      phase: 'scheduled' | 'started' | 'ended';
      name: string;
      description: string;
      starts_at: string | null;
      ends_at: string | null;
      at: string;
      /** What it covers by the names the page shows; empty: the whole project. */
      components: string[];
    };

/** The page a message is about, with its addresses now. */
export interface NoticePage {
  title: string;
  /** The public page's URL. */
  url: string;
  /** The public URL of an incident of the page. */
  incidentUrl: (incidentId: string) => string;
}

const utc = (iso: string | null) => (iso === null ? 'not set' : `${iso.slice(0, 16).replace('T', ' ')} UTC`);

/** The subject line and plain-text body of a notice, the same words in every message. */
export function noticeText(p: NoticePayload, page: NoticePage): { subject: string; lines: string[]; link: string } {
  if (p.kind === 'incident') {
    const state = statusWords[p.status];
    const lines = [
      `${p.title}`,
      `${state}${p.first ? '' : ' (update)'} · impact: ${impactWords[p.impact].toLowerCase()} · ${utc(p.at)}`,
      ...(p.components.length > 0 ? [`Affects: ${p.components.join(', ')}`] : []),
      '',
      p.message,
    ];
    return { subject: `[${page.title}] ${state}: ${p.title}`, lines, link: page.incidentUrl(p.incident_id) };
  }
  const verb = p.phase === 'scheduled' ? 'Maintenance scheduled' : p.phase === 'started' ? 'Maintenance started' : 'Maintenance completed';
  const lines = [
    `${p.name}`,
    `${verb} · ${utc(p.at)}`,
    `Scheduled: ${utc(p.starts_at)} to ${utc(p.ends_at)}`,
    `Covers: ${p.components.length > 0 ? p.components.join(', ') : 'all services'}`,
    ...(p.description ? ['', p.description] : []),
  ];
  return { subject: `[${page.title}] ${verb}: ${p.name}`, lines, link: page.url };
}

/** The kind of event a webhook subscriber receives (X-Uptime-Event and `event` in the body). */
export function noticeEvent(p: NoticePayload): string {
  return p.kind === 'incident' ? (p.first ? 'incident.published' : 'incident.updated') : `maintenance.${p.phase}`;
}

/** A lower-cased address for matching, or null when it is not one address a person could confirm. */
export function normalEmail(raw: string): string | null {
  const v = raw.trim();
  if (v.length < 3 || v.length > 254) return null;
  // One address: local@domain, no spaces, no list separators or display names.
  if (!/^[^\s@<>(),;:"\\[\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/.test(v))
    return null;
  return v.toLowerCase();
}
