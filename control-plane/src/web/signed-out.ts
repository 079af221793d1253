import type { FastifyReply, FastifyRequest } from 'fastify';
import { createSession, randomToken } from '../accounts/sessions.ts';
import { setPreSessionCookie, setSessionCookie } from './cookies.ts';
import type { WebDeps } from './context.ts';
import { crossSite, sameToken, submittedToken } from './csrf.ts';
import { html, type Html } from './html.ts';
import { authPage } from './layout.ts';
import { urls } from './urls.ts';

/** What the signed-out forms (sign in, sign up) share: their CSRF token and how a session starts. */

/** The double-submit token of signed-out forms: the cookie's value, set when missing. */
export function preSessionToken(req: FastifyRequest, reply: FastifyReply, deps: WebDeps): string {
  const existing = req.cookies[deps.cookies.preSession];
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = randomToken();
  setPreSessionCookie(reply, deps, token);
  return token;
}

export function signedOutFormValid(req: FastifyRequest, deps: WebDeps): boolean {
  return !crossSite(req) && sameToken(submittedToken(req), req.cookies[deps.cookies.preSession]);
}

export function formExpiredPage(deps: WebDeps): Html {
  return authPage(
    deps.assets,
    'Form expired',
    html`<div class="card">
      <div class="card-body">
        <h1>This form has expired</h1>
        <p class="muted">For your safety the form could not be accepted. Go back, reload the page and try again.</p>
        <a class="btn" href="${urls.signIn}">Back to sign in</a>
      </div>
    </div>`,
  );
}

/** A new session for the user, in a cookie; the pre-session token is replaced, so no form from before counts. */
export async function startSession(req: FastifyRequest, reply: FastifyReply, deps: WebDeps, userId: string, now: Date): Promise<void> {
  const session = await createSession(deps.ctx.sql, {
    userId,
    userAgent: req.headers['user-agent'],
    ip: req.ip,
    ttlHours: deps.ctx.config.SESSION_TTL_HOURS,
    now,
  });
  setSessionCookie(reply, deps, session.token, session.expiresAt, now);
  setPreSessionCookie(reply, deps, randomToken());
}
