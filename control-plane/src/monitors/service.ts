import { open, seal } from '../../../shared/src/crypto.ts';
import type { Assertion, MonitorType } from '../../../shared/src/contracts/checks.ts';
import { requireProject, type Principal } from '../accounts/bearer.ts';
import { AppError, notFound } from '../platform/errors.ts';
import type { ApiContext } from '../platform/http/context.ts';
import type { PageQuery } from '../platform/http/pagination.ts';
import { linkDependencies } from '../dependencies/service.ts';
import { checkIntegrationIds, linkIntegrations } from '../notifications/integrations/links.ts';
import { ensureDomains } from './domain-expiry/repo.ts';
import { defaultExpiryDays } from './expiry-warnings.ts';
import { monitorDomain } from './domain-expiry/rules.ts';
import * as repo from './repo.ts';
import { credentialsFromUrl } from './url-credentials.ts';
import { isPlain, redactSettings, validateCheck } from './check-spec.ts';
import { defaultValidHttpCodes, quorumProblem, type Monitor, type MonitorCreateBody, type MonitorUpdateBody } from './schemas.ts';

export async function listMonitors(
  ctx: ApiContext,
  p: Principal,
  projectId: string | undefined,
  page: PageQuery,
  filter: { tag?: string } = {},
) {
  if (projectId) requireProject(p, projectId);
  return repo.listMonitors(ctx.sql, projectId ? [projectId] : [...p.projectIds], page, ctx.now(), filter);
}

/** What a status page shows of a project's monitors (these ids, or all): id, name and status, oldest first. */
export async function monitorStates(
  ctx: ApiContext,
  p: Principal,
  projectId: string,
  ids?: readonly string[],
): Promise<{ id: string; name: string; status: number }[]> {
  requireProject(p, projectId);
  return repo.monitorStates(ctx.sql, projectId, ids);
}

export type { MonitorSearch } from './repo.ts';

/** The dashboard's list: a project's monitors narrowed by status, name and tag, in the order asked for. */
export async function searchMonitors(ctx: ApiContext, p: Principal, projectId: string, search: repo.MonitorSearch, page: PageQuery) {
  requireProject(p, projectId);
  return repo.searchMonitors(ctx.sql, projectId, search, page, ctx.now());
}

/** Every tag the project's monitors carry, A to Z (the dashboard's tag filter). */
export async function projectTags(ctx: ApiContext, p: Principal, projectId: string): Promise<string[]> {
  requireProject(p, projectId);
  return repo.projectTags(ctx.sql, projectId);
}

/** 404 unless the monitor is one of the principal's (a single keyed read, for what reads its history). */
export async function requireMonitor(ctx: ApiContext, p: Principal, id: string): Promise<void> {
  if (!(await repo.findRecord(ctx.sql, id, [...p.projectIds]))) throw notFound();
}

export async function getMonitor(ctx: ApiContext, p: Principal, id: string): Promise<Monitor> {
  const monitor = await repo.findMonitor(ctx.sql, id, [...p.projectIds], ctx.now());
  if (!monitor) throw notFound();
  return monitor;
}

/** The columns of what a monitor checks: its type, settings (sealed in full, redacted in the clear) and assertions. */
function checkColumns(
  ctx: ApiContext,
  spec: { type: MonitorType; url: string; settings: Record<string, unknown> | undefined; assertions: readonly Assertion[] },
  stored: Record<string, unknown> | null,
): Pick<repo.MonitorWrite, 'type' | 'settings_sealed' | 'settings' | 'assertions'> {
  const settings = validateCheck(spec, stored);
  const plain = isPlain(spec.type, settings, spec.assertions);
  return {
    type: spec.type,
    settings_sealed: plain ? null : seal(JSON.stringify(settings), ctx.keys.checkCredentials),
    settings: plain ? {} : redactSettings(settings as Record<string, unknown>),
    assertions: [...spec.assertions],
  };
}

/** The full settings stored for a monitor (secrets included), null when it has none or they cannot be opened. */
function storedSettings(ctx: ApiContext, sealed: string | null): Record<string, unknown> | null {
  if (sealed === null) return null;
  try {
    return JSON.parse(open(sealed, ctx.keys.checkCredentials)) as Record<string, unknown>;
  } catch {
    return null;
  }
}

export async function createMonitor(ctx: ApiContext, p: Principal, input: MonitorCreateBody): Promise<Monitor> {
  requireProject(p, input.project_id);
  const body = credentialsFromUrl(input);
  const check = checkColumns(
    ctx,
    { type: body.type ?? 'http', url: body.url, settings: body.settings, assertions: body.assertions ?? [] },
    null,
  );
  await checkIntegrationIds(ctx.sql, body.project_id, body.integration_ids);
  const write: repo.MonitorWrite = {
    project_id: body.project_id,
    name: body.name,
    url: body.url,
    method: body._method,
    valid_http_codes: body.valid_http_codes ?? defaultValidHttpCodes,
    basic_auth_username: body.basic_auth_username ?? null,
    basic_auth_password_sealed: body.basic_auth_password ? seal(body.basic_auth_password, ctx.keys.checkCredentials) : null,
    active: body.active,
    interval_seconds: body.interval,
    timeout_seconds: body.timeout ?? Math.min(10, body.interval),
    regions: body.regions ?? null,
    quorum: body.quorum ?? null,
    confirm_down: body.confirm_down ?? 1,
    confirm_up: body.confirm_up ?? 1,
    flap_threshold: body.flap_threshold ?? null,
    flap_window_seconds: body.flap_window_seconds ?? 600,
    alert_regional: body.alert_regional ?? false,
    alert_degraded: body.alert_degraded ?? false,
    follow_redirects: body.follow_redirects,
    tags: body.tags ?? [],
    certificate_expiry_days: body.certificate_expiry_days ?? defaultExpiryDays,
    domain_expiry_days: body.domain_expiry_days ?? defaultExpiryDays,
    registrable_domain: monitorDomain(body.url),
    ...check,
  };
  const id = await ctx.sql.begin(async (tx) => {
    const id = await repo.insertMonitor(tx, write);
    if (write.active) await ensureDomains(tx, [write.registrable_domain], ctx.now());
    await linkIntegrations(tx, { kind: 'monitor', id }, body.integration_ids ?? []);
    await linkDependencies(tx, body.project_id, { type: 'monitor', id }, body.depends_on ?? []);
    return id;
  });
  return getMonitor(ctx, p, id);
}

/** PUT: fields present are replaced, absent ones kept; a null password clears it. */
export async function updateMonitor(ctx: ApiContext, p: Principal, id: string, input: MonitorUpdateBody): Promise<Monitor> {
  const current = await ownRecord(ctx, p, id);
  const body = credentialsFromUrl(input);
  await checkIntegrationIds(ctx.sql, current.project_id, body.integration_ids);
  const write = updatedWrite(ctx, current, body);
  await ctx.sql.begin(async (tx) => {
    await repo.updateMonitor(tx, id, write);
    if (hostOf(write.url) !== hostOf(current.url)) await repo.forgetCertificate(tx, id);
    if (write.active) await ensureDomains(tx, [write.registrable_domain], ctx.now());
    await linkIntegrations(tx, { kind: 'monitor', id }, body.integration_ids);
    await linkDependencies(tx, current.project_id, { type: 'monitor', id }, body.depends_on);
  });
  return getMonitor(ctx, p, id);
}

/**
 * The monitor as an update would leave it, validated and merged as one (kept secrets filled in)
 * but not saved: what "test now" checks on the dashboard's edit form.
 */
export async function previewUpdate(ctx: ApiContext, p: Principal, id: string, input: MonitorUpdateBody): Promise<repo.MonitorWrite> {
  const current = await ownRecord(ctx, p, id);
  return updatedWrite(ctx, current, credentialsFromUrl(input));
}

/** The host and port an address names (a certificate belongs to them); null when it does not parse. */
function hostOf(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}

async function ownRecord(ctx: ApiContext, p: Principal, id: string): Promise<repo.MonitorRecord> {
  const current = await repo.findRecord(ctx.sql, id, [...p.projectIds]);
  if (!current) throw notFound();
  return current;
}

/** The stored monitor with an update's fields (credentials already split off its URL) applied. */
function updatedWrite(ctx: ApiContext, current: repo.MonitorRecord, body: MonitorUpdateBody): repo.MonitorWrite {
  const interval = body.interval ?? current.interval_seconds;
  if (body.timeout !== undefined && body.timeout > interval) {
    const message = 'The timeout field must not be greater than the interval.';
    throw new AppError('VALIDATION', message, { timeout: [message] });
  }
  const regions = body.regions === undefined ? current.regions : body.regions;
  const quorum = body.quorum === undefined ? current.quorum : body.quorum;
  const problem = quorumProblem(quorum, regions);
  if (problem) throw new AppError('VALIDATION', problem, { quorum: [problem] });
  // A shorter interval pulls a stored timeout down with it: a check never outlives its slot.
  const timeout = body.timeout ?? Math.min(current.timeout_seconds, interval);
  const type = body.type ?? current.type;
  // Settings of another type are not carried over: a new type starts from its defaults.
  const sameType = type === current.type;
  const check = checkColumns(
    ctx,
    {
      type,
      url: body.url ?? current.url,
      settings: body.settings ?? (sameType ? current.settings : undefined),
      assertions: body.assertions ?? (sameType ? current.assertions : []),
    },
    sameType ? storedSettings(ctx, current.settings_sealed) : null,
  );
  return {
    project_id: current.project_id,
    name: body.name ?? current.name,
    url: body.url ?? current.url,
    method: body._method ?? current.method,
    valid_http_codes: body.valid_http_codes ?? current.valid_http_codes,
    basic_auth_username: body.basic_auth_username === undefined ? current.basic_auth_username : body.basic_auth_username,
    basic_auth_password_sealed:
      body.basic_auth_password === undefined
        ? current.basic_auth_password_sealed
        : body.basic_auth_password === null
          ? null
          : seal(body.basic_auth_password, ctx.keys.checkCredentials),
    active: body.active ?? current.active,
    interval_seconds: interval,
    timeout_seconds: timeout,
    regions,
    quorum,
    confirm_down: body.confirm_down ?? current.confirm_down,
    confirm_up: body.confirm_up ?? current.confirm_up,
    flap_threshold: body.flap_threshold === undefined ? current.flap_threshold : body.flap_threshold,
    flap_window_seconds: body.flap_window_seconds ?? current.flap_window_seconds,
    alert_regional: body.alert_regional ?? current.alert_regional,
    alert_degraded: body.alert_degraded ?? current.alert_degraded,
    follow_redirects: body.follow_redirects ?? current.follow_redirects,
    tags: body.tags ?? current.tags,
    certificate_expiry_days: body.certificate_expiry_days ?? current.certificate_expiry_days,
    domain_expiry_days: body.domain_expiry_days ?? current.domain_expiry_days,
    registrable_domain: monitorDomain(body.url ?? current.url),
    ...check,
  };
}

export async function deleteMonitor(ctx: ApiContext, p: Principal, id: string): Promise<void> {
  if (!(await repo.deleteMonitor(ctx.sql, id, [...p.projectIds]))) throw notFound();
}
