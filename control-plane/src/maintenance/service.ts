import type { DomainEvent } from '../../../shared/src/contracts/events.ts';
import { noticeScheduledMaintenance } from '../status-pages/subscribers/notices.ts';
import { requireProject, type Principal } from '../accounts/bearer.ts';
import type { Db } from '../platform/db/sql.ts';
import { AppError, notFound } from '../platform/errors.ts';
import type { ApiContext } from '../platform/http/context.ts';
import type { PageQuery } from '../platform/http/pagination.ts';
import { recordEvent, type OutboxPublisher } from '../platform/outbox.ts';
import * as repo from './repo.ts';
import { currentOrNextRun, firstStartAfter, maintenanceUntil, runAt, type WindowSchedule } from './schedule.ts';
import {
  ANNOUNCE_DAYS,
  MAX_ONE_OFF_SECONDS,
  type MaintenanceWindow,
  type MaintenanceWindowCreateBody,
  type MaintenanceWindowUpdateBody,
} from './schemas.ts';

export type MaintenanceContext = ApiContext & { outbox?: Pick<OutboxPublisher, 'publish'> };

/** A window's definition as the rules read it. */
export function scheduleOf(w: repo.WindowRecord): WindowSchedule {
  return {
    starts_at: w.starts_at?.getTime() ?? null,
    ends_at: w.ends_at?.getTime() ?? null,
    cron: w.cron,
    duration_seconds: w.duration_seconds,
    timezone: w.timezone,
    active: w.active,
    not_before: w.created_at.getTime(),
  };
}

const iso = (d: Date | number) => new Date(d).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

function toView(w: repo.WindowRecord, now: Date): MaintenanceWindow {
  const schedule = scheduleOf(w);
  const run = currentOrNextRun(schedule, now.getTime());
  return {
    id: w.id,
    project_id: w.project_id,
    name: w.name,
    description: w.description,
    kind: w.cron === null ? 'one_off' : 'recurring',
    starts_at: w.starts_at && iso(w.starts_at),
    ends_at: w.ends_at && iso(w.ends_at),
    cron: w.cron,
    duration_seconds: w.duration_seconds,
    timezone: w.timezone,
    whole_project: w.whole_project,
    monitor_ids: w.monitor_ids,
    heartbeat_ids: w.heartbeat_ids,
    active: w.active,
    in_progress: runAt(schedule, now.getTime()) !== null,
    current_or_next: run && { starts_at: iso(run.start), ends_at: iso(run.end) },
    created_at: iso(w.created_at),
    updated_at: iso(w.updated_at),
  };
}

const invalid = (field: string, message: string) => new AppError('VALIDATION', message, { [field]: [message] });

/** The rules that tie fields together, on the definition a create or an update leads to. */
async function checkDefinition(db: Db, projectId: string, w: repo.WindowWrite): Promise<void> {
  const oneOff = w.starts_at !== null || w.ends_at !== null;
  const recurring = w.cron !== null || w.duration_seconds !== null;
  if (oneOff && recurring) {
    throw invalid('cron', 'A window is one-off (starts_at and ends_at) or recurring (cron and duration_seconds), not both.');
  }
  if (!oneOff && !recurring) {
    throw invalid('starts_at', 'Give starts_at and ends_at for a one-off window, or cron and duration_seconds for a recurring one.');
  }
  if (oneOff) {
    if (w.starts_at === null) throw invalid('starts_at', 'The starts_at field is required with ends_at.');
    if (w.ends_at === null) throw invalid('ends_at', 'The ends_at field is required with starts_at.');
    if (w.ends_at <= w.starts_at) throw invalid('ends_at', 'The ends_at field must be after starts_at.');
    if (w.ends_at.getTime() - w.starts_at.getTime() > MAX_ONE_OFF_SECONDS * 1000) {
      throw invalid('ends_at', `A one-off window lasts ${MAX_ONE_OFF_SECONDS / 86_400} days at most.`);
    }
  } else {
    if (w.cron === null) throw invalid('cron', 'The cron field is required with duration_seconds.');
    if (w.duration_seconds === null) throw invalid('duration_seconds', 'The duration_seconds field is required with cron.');
  }
  if (w.whole_project && (w.monitor_ids.length > 0 || w.heartbeat_ids.length > 0)) {
    const field = w.monitor_ids.length > 0 ? 'monitor_ids' : 'heartbeat_ids';
    throw invalid(field, `A window covering the whole project names no monitors or heartbeats (${field} must be empty).`);
  }
  if (!w.whole_project && w.monitor_ids.length === 0 && w.heartbeat_ids.length === 0) {
    throw invalid('monitor_ids', 'Name at least one monitor or heartbeat (monitor_ids, heartbeat_ids), or set whole_project.');
  }
  const foreign = await repo.foreignSubjects(db, projectId, w.monitor_ids, w.heartbeat_ids);
  if (foreign.monitors.length > 0) throw invalid('monitor_ids', `Not monitors of this project: ${foreign.monitors.join(', ')}.`);
  if (foreign.heartbeats.length > 0) throw invalid('heartbeat_ids', `Not heartbeats of this project: ${foreign.heartbeats.join(', ')}.`);
}

const unique = (ids: readonly string[]) => [...new Set(ids)];
const date = (v: string | null | undefined) => (v == null ? null : new Date(v));

export async function listWindows(ctx: ApiContext, p: Principal, projectId: string | undefined, page: PageQuery) {
  if (projectId) requireProject(p, projectId);
  const { items, total } = await repo.listWindows(ctx.sql, projectId ? [projectId] : [...p.projectIds], page);
  const now = ctx.now();
  return { items: items.map((w) => toView(w, now)), total };
}

export async function getWindow(ctx: ApiContext, p: Principal, id: string): Promise<MaintenanceWindow> {
  const w = await repo.findWindow(ctx.sql, id, [...p.projectIds]);
  if (!w) throw notFound();
  return toView(w, ctx.now());
}

/** A window as status page subscribers are told of it ahead. */
const noticed = (id: string, w: repo.WindowWrite) => ({
  id,
  name: w.name,
  description: w.description,
  starts_at: w.starts_at && w.starts_at.toISOString(),
  ends_at: w.ends_at && w.ends_at.toISOString(),
  whole_project: w.whole_project,
  monitor_ids: w.monitor_ids,
  heartbeat_ids: w.heartbeat_ids,
  recurring: w.cron !== null,
  active: w.active,
});

export async function createWindow(ctx: ApiContext, p: Principal, body: MaintenanceWindowCreateBody): Promise<MaintenanceWindow> {
  requireProject(p, body.project_id);
  const write: repo.WindowWrite = {
    name: body.name,
    description: body.description,
    starts_at: date(body.starts_at),
    ends_at: date(body.ends_at),
    cron: body.cron ?? null,
    duration_seconds: body.duration_seconds ?? null,
    timezone: body.timezone,
    whole_project: body.whole_project,
    monitor_ids: unique(body.monitor_ids),
    heartbeat_ids: unique(body.heartbeat_ids),
    active: body.active,
  };
  const id = await ctx.sql.begin(async (tx) => {
    await checkDefinition(tx, body.project_id, write);
    const id = await repo.insertWindow(tx, body.project_id, write, ctx.now());
    await noticeScheduledMaintenance(tx, body.project_id, noticed(id, write), ctx.now());
    return id;
  });
  return getWindow(ctx, p, id);
}

export async function updateWindow(
  ctx: ApiContext,
  p: Principal,
  id: string,
  body: MaintenanceWindowUpdateBody,
): Promise<MaintenanceWindow> {
  await ctx.sql.begin(async (tx) => {
    const current = await repo.findWindow(tx, id, [...p.projectIds], true);
    if (!current) throw notFound();
    const write: repo.WindowWrite = {
      name: body.name ?? current.name,
      description: body.description ?? current.description,
      starts_at: body.starts_at === undefined ? current.starts_at : date(body.starts_at),
      ends_at: body.ends_at === undefined ? current.ends_at : date(body.ends_at),
      cron: body.cron === undefined ? current.cron : body.cron,
      duration_seconds: body.duration_seconds === undefined ? current.duration_seconds : body.duration_seconds,
      timezone: body.timezone ?? current.timezone,
      whole_project: body.whole_project ?? current.whole_project,
      monitor_ids: unique(body.monitor_ids ?? current.monitor_ids),
      heartbeat_ids: unique(body.heartbeat_ids ?? current.heartbeat_ids),
      active: body.active ?? current.active,
    };
    await checkDefinition(tx, current.project_id, write);
    await repo.updateWindow(tx, id, write, ctx.now());
    await repo.reviewHeldAlerts(tx, current.project_id, ctx.now());
    await noticeScheduledMaintenance(tx, current.project_id, noticed(id, write), ctx.now());
  });
  return getWindow(ctx, p, id);
}

/** Deletes a window; one in progress ends now (its event is published, the time so far stays out of uptime). */
export async function deleteWindow(ctx: MaintenanceContext, p: Principal, id: string): Promise<void> {
  const events = await ctx.sql.begin(async (tx) => {
    const w = await repo.findWindow(tx, id, [...p.projectIds], true);
    if (!w) throw notFound();
    const now = ctx.now();
    const out: DomainEvent[] = [];
    if (w.active_until !== null) {
      const started = await repo.closeOccurrence(tx, w.id, now);
      out.push(await recordEvent(tx, boundaryEvent(w, 'maintenance.ended', now, started, now)));
    }
    await repo.deleteWindow(tx, w.id);
    await repo.reviewHeldAlerts(tx, w.project_id, now);
    return out;
  });
  if (events.length > 0 && ctx.outbox) await ctx.outbox.publish(events);
}

/** The public event of a window starting or ending (docs/streams.md). */
export function boundaryEvent(
  w: repo.WindowRecord,
  kind: 'maintenance.started' | 'maintenance.ended',
  at: Date,
  start: Date | null,
  end: Date | null,
): Omit<DomainEvent, 'id'> {
  return {
    kind,
    occurred_at: at.toISOString(),
    project_id: w.project_id,
    subject: { type: 'maintenance_window', id: w.id, name: w.name },
    data: {
      starts_at: start && start.toISOString(),
      ends_at: end && end.toISOString(),
      whole_project: w.whole_project,
      monitor_ids: w.monitor_ids,
      heartbeat_ids: w.heartbeat_ids,
    },
  };
}

/** Whether a window names this monitor or heartbeat (or covers its whole project). */
const covers = (w: repo.WindowRecord, projectId: string, subject: { type: string; id: string }) =>
  w.project_id === projectId &&
  (w.whole_project ||
    (subject.type === 'monitor' && w.monitor_ids.includes(subject.id)) ||
    (subject.type === 'heartbeat' && w.heartbeat_ids.includes(subject.id)));

/**
 * The windows of these projects, to ask which cover a monitor or heartbeat (the router's look-up,
 * in its transaction). Paused windows are left out.
 */
export async function coverage(db: Db, projectIds: readonly string[]) {
  const windows = (await repo.windowsOfProjects(db, [...new Set(projectIds)])).filter((w) => w.active);
  return {
    /** Whether any of these projects has a window at all. */
    any: windows.length > 0,
    /** The windows covering one subject. */
    covering(projectId: string, subject: { type: string; id: string }): WindowSchedule[] {
      return windows.filter((w) => covers(w, projectId, subject)).map(scheduleOf);
    },
  };
}

/** The maintenance of one monitor or heartbeat: the run covering it now, else the next one ahead. */
export interface SubjectMaintenance {
  in_progress: boolean;
  starts_at: string;
  /** When the subject leaves maintenance: runs of its windows that overlap or touch count as one. */
  ends_at: string;
  /** The window whose run it is (the oldest, when several cover the same instant). */
  window: { id: string; name: string; timezone: string };
}

/** What a monitor's or a heartbeat's page says of its maintenance; null when no window covers it now or later. */
export async function subjectMaintenance(
  ctx: ApiContext,
  p: Principal,
  projectId: string,
  subject: { type: 'monitor' | 'heartbeat'; id: string },
): Promise<SubjectMaintenance | null> {
  requireProject(p, projectId);
  const now = ctx.now().getTime();
  const windows = (await repo.windowsOfProjects(ctx.sql, [projectId]))
    .filter((w) => w.active && covers(w, projectId, subject))
    .map((w) => ({ w, schedule: scheduleOf(w) }));
  const schedules = windows.map((x) => x.schedule);
  const view = (w: repo.WindowRecord, in_progress: boolean, start: number): SubjectMaintenance => ({
    in_progress,
    starts_at: iso(start),
    ends_at: iso(maintenanceUntil(schedules, in_progress ? now : start)!),
    window: { id: w.id, name: w.name, timezone: w.timezone },
  });
  for (const { w, schedule } of windows) {
    const run = runAt(schedule, now);
    if (run) return view(w, true, run.start);
  }
  let next: { w: repo.WindowRecord; start: number } | null = null;
  for (const { w, schedule } of windows) {
    const start = firstStartAfter(schedule, now);
    if (start !== null && (next === null || start < next.start)) next = { w, start };
  }
  return next && view(next.w, false, next.start);
}

/** When maintenance covered a monitor or a heartbeat between two instants, as [start, end] in ms, oldest first. */
export async function maintenanceSpans(
  ctx: ApiContext,
  p: Principal,
  projectId: string,
  subject: { type: 'monitor' | 'heartbeat'; id: string },
  from: Date,
  to: Date,
): Promise<[number, number][]> {
  requireProject(p, projectId);
  return (await repo.occurrencesOf(ctx.sql, projectId, subject, from, to)).map((o) => [o.starts_at.getTime(), o.ends_at.getTime()]);
}

/** What a status page announces: a window of the project running now or starting within ANNOUNCE_DAYS. */
export interface Announcement {
  /** The window's id and when it was last edited (a feed's entry and its date); never shown. */
  id: string;
  updated_at: string;
  name: string;
  description: string;
  starts_at: string;
  ends_at: string;
  in_progress: boolean;
  /** null: the whole project. */
  monitor_ids: string[] | null;
  heartbeat_ids: string[] | null;
}

export async function announcements(ctx: ApiContext, projectId: string): Promise<Announcement[]> {
  const now = ctx.now().getTime();
  const out: Announcement[] = [];
  for (const w of await repo.windowsOfProjects(ctx.sql, [projectId])) {
    const schedule = scheduleOf(w);
    const run = currentOrNextRun(schedule, now);
    if (!run || run.start > now + ANNOUNCE_DAYS * 86_400_000) continue;
    out.push({
      id: w.id,
      updated_at: iso(w.updated_at),
      name: w.name,
      description: w.description,
      starts_at: iso(run.start),
      ends_at: iso(run.end),
      in_progress: run.start <= now,
      monitor_ids: w.whole_project ? null : w.monitor_ids,
      heartbeat_ids: w.whole_project ? null : w.heartbeat_ids,
    });
  }
  return out.sort((a, b) => a.starts_at.localeCompare(b.starts_at));
}
