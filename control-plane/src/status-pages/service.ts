import { requireProject, type Principal } from '../accounts/bearer.ts';
import { hashPassword } from '../accounts/passwords.ts';
import { normalRange } from './access.ts';
import type { PageAccess } from './snapshots.ts';
import * as heartbeats from '../heartbeats/service.ts';
import { announcements, type Announcement } from '../maintenance/service.ts';
import * as monitors from '../monitors/service.ts';
import { AppError, notFound } from '../platform/errors.ts';
import type { ApiContext } from '../platform/http/context.ts';
import type { PageQuery } from '../platform/http/pagination.ts';
import { formatTimestamp } from '../platform/http/time.ts';
import type { HeartbeatStatus } from '../heartbeats/state.ts';
import * as incidentsRepo from './incidents/repo.ts';
import { highestImpact } from './incidents/rules.ts';
import { overallStatus, type ComponentState } from './overall.ts';
import * as repo from './repo.ts';
import {
  MAX_COMPONENTS,
  MAX_PAGES_PER_PROJECT,
  type StatusPage,
  type StatusPageComponent,
  type StatusPageCreateBody,
  type StatusPageGroupBody,
  type StatusPageUpdateBody,
} from './schemas.ts';

/**
 * Public status pages (docs/status-pages.md): several per project, each at its own random
 * address, showing groups of the project's monitors and heartbeats (all of them while it has no
 * groups) under a banner decided by the rule in overall.ts.
 */

export interface ShownGroup {
  name: string;
  components: StatusPageComponent[];
}

type Subject = { id: string; name: string; status: StatusPageComponent['status'] };

/** What a page's project looks like now: its subjects by id, and its maintenance running now or starting within the week. */
interface ProjectNow {
  monitors: Map<string, Subject>;
  heartbeats: Map<string, Subject>;
  maintenance: Announcement[];
}

const invalid = (field: string, message: string) => new AppError('VALIDATION', message, { [field]: [message] });

/** A host name is one page's at most: another page's is a conflict naming the field. */
async function domainTaken<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (err) {
    if ((err as { constraint_name?: string }).constraint_name === 'status_pages_custom_domain_key')
      throw new AppError('CONFLICT', 'Another status page already answers at this host name.', {
        custom_domain: ['Another status page already answers at this host name.'],
      });
    throw err;
  }
}

/** Who may read a page: null when anyone with its address may. */
const accessOf = (page: repo.PageRecord): PageAccess | null =>
  page.password_hash === null && page.ip_allowlist === null
    ? null
    : { pageId: page.id, passwordHash: page.password_hash, ipAllowlist: page.ip_allowlist };

/** A password as stored (hashed as users' are, before any row is locked); null removes it, undefined keeps it. */
const hashOf = async (password: string | null | undefined) => (typeof password === 'string' ? hashPassword(password) : password);

/** The ranges as stored: each once, in a written form; null for none. */
function allowlistOf(ranges: readonly string[] | null | undefined): string[] | null {
  const list = [...new Set((ranges ?? []).map(normalRange))];
  return list.length ? list : null;
}

/** The principal given, or one that sees exactly this project (the public page). */
const projectPrincipal = (projectId: string): Principal => ({
  userId: 'public',
  tokenId: 'public',
  organizationIds: new Set(),
  ownedOrganizationIds: new Set(),
  projectIds: new Set([projectId]),
});

/** The subjects and maintenance of a project, for these pages: every subject when one of them has no groups, else only theirs. */
async function projectNow(
  ctx: ApiContext,
  p: Principal,
  projectId: string,
  components: readonly repo.ComponentRecord[] | 'all',
): Promise<ProjectNow> {
  const ids = (type: 'monitor' | 'heartbeat') =>
    components === 'all' ? undefined : components.filter((c) => c.type === type).map((c) => c.subject_id);
  const [ms, hs, maintenance] = await Promise.all([
    monitors.monitorStates(ctx, p, projectId, ids('monitor')),
    heartbeats.heartbeatStates(ctx, p, projectId, ids('heartbeat')),
    announcements(ctx, projectId),
  ]);
  return {
    monitors: new Map(ms.map((m) => [m.id, m])),
    heartbeats: new Map(hs.map((h) => [h.id, h])),
    maintenance,
  };
}

function inMaintenance(now: ProjectNow, type: 'monitor' | 'heartbeat', id: string): boolean {
  return now.maintenance.some(
    (a) => a.in_progress && (a.monitor_ids === null || (type === 'monitor' ? a.monitor_ids : (a.heartbeat_ids ?? [])).includes(id)),
  );
}

function component(
  now: ProjectNow,
  type: 'monitor' | 'heartbeat',
  id: string,
  extra: { display_name: string | null; description: string },
): StatusPageComponent | null {
  const subject = (type === 'monitor' ? now.monitors : now.heartbeats).get(id);
  // Deleted since the components were read: its row goes with it.
  if (!subject) return null;
  return { type, id, name: subject.name, ...extra, status: subject.status, in_maintenance: inMaintenance(now, type, id) };
}

/** Items by a key, in their order. */
function byKey<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

/** The groups a page is configured with, each with its components as they are now. */
function configuredGroups(
  groups: readonly repo.GroupRecord[],
  componentsOf: ReadonlyMap<string, readonly repo.ComponentRecord[]>,
  now: ProjectNow,
): ShownGroup[] {
  return groups.map((g) => ({
    name: g.name,
    components: (componentsOf.get(g.id) ?? [])
      .map((c) => component(now, c.type, c.subject_id, { display_name: c.display_name, description: c.description }))
      .filter((c): c is StatusPageComponent => c !== null),
  }));
}

/** What a page without groups shows: every monitor, then every heartbeat, of the project (what pages showed before groups). */
function defaultGroups(now: ProjectNow): ShownGroup[] {
  const all = (type: 'monitor' | 'heartbeat', name: string) => ({
    name,
    components: [...(type === 'monitor' ? now.monitors : now.heartbeats).keys()]
      .map((id) => component(now, type, id, { display_name: null, description: '' }))
      .filter((c): c is StatusPageComponent => c !== null),
  });
  return [all('monitor', 'Services'), all('heartbeat', 'Scheduled jobs')].filter((g) => g.components.length > 0);
}

const stateOf = (c: StatusPageComponent): ComponentState =>
  c.type === 'monitor'
    ? { type: 'monitor', status: Number(c.status), in_maintenance: c.in_maintenance }
    : { type: 'heartbeat', status: c.status as HeartbeatStatus, in_maintenance: c.in_maintenance };

interface Built {
  view: StatusPage;
  /** What the public page shows: the groups configured (but empty ones), or the default ones. */
  shown: ShownGroup[];
  now: ProjectNow;
}

async function build(ctx: ApiContext, p: Principal, pages: readonly repo.PageRecord[]): Promise<Built[]> {
  const ids = pages.map((x) => x.id);
  const [groups, components, impacts] = await Promise.all([
    repo.groupsOf(ctx.sql, ids),
    repo.componentsOf(ctx.sql, ids),
    incidentsRepo.openImpacts(ctx.sql, ids),
  ]);
  const groupsOf = byKey(groups, (g) => g.status_page_id);
  const componentsOfPage = byKey(components, (c) => c.status_page_id);
  const componentsOfGroup = byKey(
    components.filter((c) => c.group_id !== null),
    (c) => c.group_id!,
  );
  // A page with neither groups nor components shows every monitor and heartbeat of its project.
  const isDefault = (pageId: string) => !groupsOf.has(pageId) && !componentsOfPage.has(pageId);
  const byProject = new Map<string, Promise<ProjectNow>>();
  for (const [projectId, ofProject] of byKey(pages, (x) => x.project_id)) {
    const wanted = ofProject.some((x) => isDefault(x.id)) ? 'all' : ofProject.flatMap((x) => componentsOfPage.get(x.id) ?? []);
    byProject.set(projectId, projectNow(ctx, p, projectId, wanted));
  }
  return Promise.all(
    pages.map(async (page) => {
      const now = await byProject.get(page.project_id)!;
      const configured = configuredGroups(groupsOf.get(page.id) ?? [], componentsOfGroup, now);
      const shown = isDefault(page.id) ? defaultGroups(now) : configured.filter((g) => g.components.length > 0);
      const view: StatusPage = {
        id: page.id,
        project_id: page.project_id,
        title: page.title,
        description: page.description,
        slug: page.slug,
        custom_domain: page.custom_domain,
        url: `${ctx.config.PUBLIC_URL}/status/${page.slug}`,
        groups: configured,
        // Published incidents that are not resolved raise the banner by their heaviest impact.
        overall: overallStatus(shown.flatMap((g) => g.components).map(stateOf), highestImpact(impacts.get(page.id) ?? [])),
        auto_publish_incidents: page.auto_publish_incidents,
        password_protected: page.password_hash !== null,
        ip_allowlist: page.ip_allowlist ?? [],
        created_at: formatTimestamp(page.created_at),
        updated_at: formatTimestamp(page.updated_at),
      };
      return { view, shown, now };
    }),
  );
}

async function one(ctx: ApiContext, p: Principal, page: repo.PageRecord): Promise<StatusPage> {
  return (await build(ctx, p, [page]))[0]!.view;
}

/**
 * The groups as written: display names trimmed to null when empty; refused (422 naming the field)
 * when a name repeats, a subject is not of the project or is on the page twice, or there are too
 * many components.
 */
async function checkGroups(
  ctx: ApiContext,
  p: Principal,
  projectId: string,
  groups: readonly StatusPageGroupBody[],
): Promise<repo.GroupWrite[]> {
  const total = groups.reduce((n, g) => n + g.components.length, 0);
  if (total > MAX_COMPONENTS) throw invalid('groups', `A page shows at most ${MAX_COMPONENTS} components (these groups hold ${total}).`);
  const names = new Map<string, number>();
  for (const [i, g] of groups.entries()) {
    const first = names.get(g.name.toLowerCase());
    if (first !== undefined)
      throw invalid(
        `groups.${i}.name`,
        `The name of group ${first} (groups.${first}.name) is used already: each group needs its own name.`,
      );
    names.set(g.name.toLowerCase(), i);
  }
  const seen = new Map<string, string>();
  for (const [i, g] of groups.entries()) {
    for (const [j, c] of g.components.entries()) {
      const key = `${c.type}:${c.id}`;
      const at = seen.get(key);
      if (at) throw invalid(`groups.${i}.components.${j}.id`, `This ${c.type} is on the page already (${at}): a page shows it once.`);
      seen.set(key, `groups.${i}.components.${j}`);
    }
  }
  const wanted = (type: 'monitor' | 'heartbeat') => [
    ...new Set(groups.flatMap((g) => g.components.filter((c) => c.type === type).map((c) => c.id))),
  ];
  const [ms, hs] = await Promise.all([
    wanted('monitor').length ? monitors.monitorStates(ctx, p, projectId, wanted('monitor')) : [],
    wanted('heartbeat').length ? heartbeats.heartbeatStates(ctx, p, projectId, wanted('heartbeat')) : [],
  ]);
  const found = new Set([...ms.map((m) => `monitor:${m.id}`), ...hs.map((h) => `heartbeat:${h.id}`)]);
  for (const [i, g] of groups.entries()) {
    for (const [j, c] of g.components.entries()) {
      if (!found.has(`${c.type}:${c.id}`)) throw invalid(`groups.${i}.components.${j}.id`, `Not a ${c.type} of this project: ${c.id}.`);
    }
  }
  return groups.map((g) => ({
    name: g.name,
    components: g.components.map((c) => ({ type: c.type, id: c.id, display_name: c.display_name || null, description: c.description })),
  }));
}

export async function listStatusPages(ctx: ApiContext, p: Principal, projectId: string | undefined, page: PageQuery) {
  if (projectId) requireProject(p, projectId);
  const { items, total } = await repo.listPages(ctx.sql, projectId ? [projectId] : [...p.projectIds], page);
  return { items: (await build(ctx, p, items)).map((b) => b.view), total };
}

export async function getStatusPage(ctx: ApiContext, p: Principal, id: string): Promise<StatusPage> {
  const page = await repo.findPage(ctx.sql, id, [...p.projectIds]);
  if (!page) throw notFound();
  return one(ctx, p, page);
}

export async function createStatusPage(ctx: ApiContext, p: Principal, body: StatusPageCreateBody): Promise<StatusPage> {
  requireProject(p, body.project_id);
  const groups = await checkGroups(ctx, p, body.project_id, body.groups);
  const passwordHash = await hashOf(body.password);
  const id = await ctx.sql.begin(async (tx) => {
    const count = await repo.lockProjectPages(tx, body.project_id);
    if (count >= MAX_PAGES_PER_PROJECT) throw invalid('project_id', `A project has at most ${MAX_PAGES_PER_PROJECT} status pages.`);
    const id = await domainTaken(
      repo.insertPage(
        tx,
        body.project_id,
        {
          title: body.title,
          description: body.description,
          auto_publish_incidents: body.auto_publish_incidents,
          custom_domain: body.custom_domain ?? null,
          password_hash: passwordHash ?? null,
          ip_allowlist: allowlistOf(body.ip_allowlist),
        },
        ctx.now(),
      ),
    );
    await repo.replaceGroups(tx, id, groups);
    return id;
  });
  return getStatusPage(ctx, p, id);
}

export async function updateStatusPage(ctx: ApiContext, p: Principal, id: string, body: StatusPageUpdateBody): Promise<StatusPage> {
  const current = await repo.findPage(ctx.sql, id, [...p.projectIds]);
  if (!current) throw notFound();
  const groups = body.groups && (await checkGroups(ctx, p, current.project_id, body.groups));
  const passwordHash = await hashOf(body.password);
  await ctx.sql.begin(async (tx) => {
    const page = await repo.findPage(tx, id, [...p.projectIds], true);
    if (!page) throw notFound();
    await domainTaken(
      repo.updatePage(
        tx,
        id,
        {
          title: body.title ?? page.title,
          description: body.description ?? page.description,
          auto_publish_incidents: body.auto_publish_incidents ?? page.auto_publish_incidents,
          custom_domain: body.custom_domain === undefined ? page.custom_domain : body.custom_domain,
          password_hash: passwordHash === undefined ? page.password_hash : passwordHash,
          ip_allowlist: body.ip_allowlist === undefined ? page.ip_allowlist : allowlistOf(body.ip_allowlist),
        },
        ctx.now(),
      ),
    );
    if (groups) await repo.replaceGroups(tx, id, groups);
  });
  return getStatusPage(ctx, p, id);
}

/** A new address for the page; the old one stops working at once. */
export async function changeStatusPageAddress(ctx: ApiContext, p: Principal, id: string): Promise<StatusPage> {
  const page = await repo.findPage(ctx.sql, id, [...p.projectIds]);
  if (!page) throw notFound();
  await repo.changeSlug(ctx.sql, id, ctx.now());
  return getStatusPage(ctx, p, id);
}

export async function deleteStatusPage(ctx: ApiContext, p: Principal, id: string): Promise<void> {
  const page = await repo.findPage(ctx.sql, id, [...p.projectIds]);
  if (!page) throw notFound();
  await repo.deletePage(ctx.sql, id);
}

/** A page of the principal's (404 otherwise), with the components it shows now (every subject of its project when it has no groups). */
export async function pageShowing(
  ctx: ApiContext,
  p: Principal,
  id: string,
): Promise<{ page: repo.PageRecord; view: StatusPage; shown: StatusPageComponent[] }> {
  const page = await repo.findPage(ctx.sql, id, [...p.projectIds]);
  if (!page) throw notFound();
  const { view, shown } = (await build(ctx, p, [page]))[0]!;
  return { page, view, shown: shown.flatMap((g) => g.components) };
}

/** What the public address shows: public, the address is the secret. */
export interface PublicStatusPage {
  page: StatusPage;
  groups: ShownGroup[];
  /** Maintenance running now or starting within the week that covers something the page shows (or the whole project). */
  maintenance: Announcement[];
  /** Who may read it (ADR 0041); null: anyone with the address. */
  access: PageAccess | null;
}

export async function publicStatusPage(ctx: ApiContext, slug: string): Promise<PublicStatusPage | undefined> {
  const page = await repo.findPageBySlug(ctx.sql, slug);
  if (!page) return undefined;
  const p = projectPrincipal(page.project_id);
  const { view, shown, now } = (await build(ctx, p, [page]))[0]!;
  const on = new Set(shown.flatMap((g) => g.components.map((c) => `${c.type}:${c.id}`)));
  const maintenance = now.maintenance
    .filter(
      (a) =>
        a.monitor_ids === null ||
        a.monitor_ids.some((id) => on.has(`monitor:${id}`)) ||
        (a.heartbeat_ids ?? []).some((id) => on.has(`heartbeat:${id}`)),
    )
    .map((a) =>
      a.monitor_ids === null
        ? a
        : {
            ...a,
            monitor_ids: a.monitor_ids.filter((id) => on.has(`monitor:${id}`)),
            heartbeat_ids: (a.heartbeat_ids ?? []).filter((id) => on.has(`heartbeat:${id}`)),
          },
    );
  return { page: view, groups: shown, maintenance, access: accessOf(page) };
}

/** The pages of a project, for the dashboard's links (title and address). */
export async function projectStatusPages(
  ctx: ApiContext,
  p: Principal,
  projectId: string,
): Promise<{ id: string; title: string; slug: string }[]> {
  requireProject(p, projectId);
  const { items } = await repo.listPages(ctx.sql, [projectId], { page: 1, per_page: MAX_PAGES_PER_PROJECT });
  return items.map(({ id, title, slug }) => ({ id, title, slug }));
}

/** The slug of each page that answers at a host name of its own, by that name. */
export function customDomainPages(ctx: ApiContext): Promise<Map<string, string>> {
  return repo.customDomains(ctx.sql);
}

/** Who may read the page at this slug (ADR 0041), and its host name; undefined: no page answers there. */
export async function pageAccessAt(
  ctx: ApiContext,
  slug: string,
): Promise<{ access: PageAccess | null; customDomain: string | null } | undefined> {
  const page = await repo.findPageBySlug(ctx.sql, slug);
  if (!page) return undefined;
  return { access: accessOf(page), customDomain: page.custom_domain };
}
