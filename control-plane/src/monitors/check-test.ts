import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { open, seal } from '../../../shared/src/crypto.ts';
import { CheckTestReply } from '../../../shared/src/contracts/check-test.ts';
import type { Assignment } from '../../../shared/src/contracts/monitoring.ts';
import { createRateLimiter } from '../../../shared/src/rate-limit.ts';
import { natsNames } from '../../../shared/src/subjects.ts';
import { requireProject, type Principal } from '../accounts/bearer.ts';
import { AppError, notFound } from '../platform/errors.ts';
import type { ApiContext } from '../platform/http/context.ts';
import { assignmentOf as monitorAssignment } from './assign/desired.ts';
import { isPlain, validateCheck } from './check-spec.ts';
import * as repo from './repo.ts';
import { defaultValidHttpCodes, MonitorCreateBody, type MonitorUpdateBody } from './schemas.ts';
import { previewUpdate } from './service.ts';
import { credentialsFromUrl, moveIntoBasicAuth } from './url-credentials.ts';

/**
 * "Test now" (ADR 0034): one check of a monitor, as saved or as a form holds it before saving, run
 * by an agent of a chosen region (any region when none is named) and answered with what it saw:
 * status, timings, error, every assertion's outcome and the details. Nothing is stored, published
 * or alerted. Every address rule of a scheduled check applies, since the agent runs the same code.
 */

const region = z.string().regex(/^[a-z0-9][a-z0-9-]{0,31}$/, 'A region is lower-case letters, digits and -, up to 32.');

export const MonitorTestBody = MonitorCreateBody.and(
  z.object({ region: region.optional().describe('The region whose agent runs the check; any region with an agent when left out.') }),
);
export type MonitorTestBody = z.infer<typeof MonitorTestBody>;

export const MonitorTestQuery = z.object({
  region: region.optional().describe('The region whose agent runs the check; any region with an agent when left out.'),
});

export const CheckTestView = CheckTestReply.meta({ id: 'CheckTest' });

/** A test runs a real check from the caller's choice of URL: a few a minute per token, as a person testing a form would. */
const limiter = createRateLimiter({ perMinute: 30, burst: 10 });

function throttle(ctx: ApiContext, p: Principal): void {
  const wait = limiter.take(p.tokenId || p.userId, ctx.now().getTime());
  if (wait > 0) throw new AppError('RATE_LIMITED', 'Too many tests: try again shortly.', undefined, { 'retry-after': String(wait) });
}

async function run(ctx: ApiContext, assignment: Assignment, where: string | undefined): Promise<CheckTestReply> {
  const names = natsNames(ctx.config.NATS_NAMESPACE);
  const place = where === undefined ? 'any region' : `region ${where}`;
  let answer: unknown;
  try {
    const msg = await ctx.nc.request(names.subjects.checkTest(where), JSON.stringify({ assignment }), {
      timeout: (assignment.timeout + 5) * 1000,
    });
    answer = msg.json();
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    const noAgent = code === '503' || (err as Error).name === 'NoRespondersError' || /no responders/i.test((err as Error).message);
    throw new AppError(
      'UNAVAILABLE',
      noAgent ? `No probe agent of ${place} is connected.` : `No answer from a probe agent of ${place} in time.`,
    );
  }
  const reply = CheckTestReply.safeParse(answer);
  if (!reply.success) {
    const busy = (answer as { error?: unknown } | null)?.error === 'busy';
    throw new AppError(
      'UNAVAILABLE',
      busy ? `The probe agent of ${place} is busy with other tests: try again.` : 'The probe agent gave no usable answer.',
    );
  }
  return reply.data;
}

/** Tests a monitor as a form holds it (not saved: nothing of it is kept). */
export async function testDraft(ctx: ApiContext, p: Principal, input: MonitorTestBody) {
  requireProject(p, input.project_id);
  throttle(ctx, p);
  const body = credentialsFromUrl(input);
  const assertions = body.assertions ?? [];
  const settings = validateCheck({ type: body.type, url: body.url, settings: body.settings, assertions }, null);
  const key = ctx.keys.checkCredentials;
  const draft = {
    id: randomUUID(),
    project_id: body.project_id,
    url: body.url,
    method: body._method,
    valid_http_codes: body.valid_http_codes ?? defaultValidHttpCodes,
    basic_auth_username: body.basic_auth_username ?? null,
    basic_auth_password_sealed: body.basic_auth_password ? seal(body.basic_auth_password, key) : null,
    interval_seconds: body.interval,
    timeout_seconds: body.timeout ?? Math.min(10, body.interval),
    follow_redirects: body.follow_redirects,
    type: body.type,
    settings_sealed: isPlain(body.type, settings, assertions) ? null : seal(JSON.stringify(settings), key),
    assertions,
  };
  return run(ctx, monitorAssignment(draft, body.region ?? 'any', new Date().toISOString()), body.region);
}

/** Tests a saved monitor as it is (its stored secrets included). */
export async function testSaved(ctx: ApiContext, p: Principal, id: string, where: string | undefined) {
  const current = await repo.findRecord(ctx.sql, id, [...p.projectIds]);
  if (!current) throw notFound();
  throttle(ctx, p);
  // Settings sealed under a key since replaced cannot be opened: say so rather than test without them.
  if (current.settings_sealed !== null) {
    try {
      open(current.settings_sealed, ctx.keys.checkCredentials);
    } catch {
      throw new AppError('CONFLICT', "The monitor's settings cannot be opened with this SECRET_KEY: save them again.");
    }
  }
  return run(ctx, storedAssignment(ctx, id, current, where), where);
}

/**
 * Tests a saved monitor as an update would leave it, without saving (the dashboard's edit form):
 * the secrets the form sends back as null are the stored ones, merged as an update merges them.
 */
export async function testEdited(ctx: ApiContext, p: Principal, id: string, changes: MonitorUpdateBody, where: string | undefined) {
  const write = await previewUpdate(ctx, p, id, changes);
  throttle(ctx, p);
  return run(ctx, storedAssignment(ctx, id, write, where), where);
}

/** The assignment of a monitor as stored (or as it would be stored), for the agent of `where`. */
function storedAssignment(
  ctx: ApiContext,
  id: string,
  stored: Omit<repo.MonitorWrite, 'registrable_domain'>,
  where: string | undefined,
): Assignment {
  const m = moveIntoBasicAuth(stored, (password) => seal(password, ctx.keys.checkCredentials));
  return monitorAssignment({ ...m, id }, where ?? 'any', new Date().toISOString());
}
