import { verifyPassword, hashPassword } from '../../accounts/passwords.ts';
import type { App } from '../../platform/http/context.ts';
import { csrfInput, field } from '../components.ts';
import { clearSessionCookie, setPreSessionCookie, setSessionCookie } from '../cookies.ts';
import { crossSite, sameToken, submittedToken } from '../csrf.ts';
import { formOf, localPath, queryText, sendHtml, text, type WebDeps } from '../context.ts';
import { html, type Html } from '../html.ts';
import { authPage } from '../layout.ts';
import { createSession, destroySession, loadSession, purgeExpiredSessions, randomToken } from '../../accounts/sessions.ts';
import { purgeSignInAttempts, reserveSignIn, signInSucceeded } from '../../accounts/throttle.ts';
import { urls } from '../urls.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';

// Checked against when the email is unknown, so a wrong email costs the same time as a wrong password.
let dummyHash: Promise<string> | undefined;

interface SignInView {
  csrf: string;
  email?: string;
  next?: string | undefined;
  error?: string;
  notice?: string;
  allowSignup: boolean;
}

function signInPage(deps: WebDeps, v: SignInView): Html {
  return authPage(
    deps.assets,
    'Sign in',
    html`<div class="card">
        <div class="card-body">
          <h1>Sign in</h1>
          ${v.notice ? html`<div class="flash" role="status">${v.notice}</div>` : ''}
          ${v.error ? html`<div class="flash error" role="alert">${v.error}</div>` : ''}
          <form method="post" action="${urls.signIn}" class="form">
            ${csrfInput(v.csrf)} ${v.next ? html`<input type="hidden" name="next" value="${v.next}" />` : ''}
            ${field({ name: 'email', label: 'Email', type: 'email', value: v.email, required: true, autocomplete: 'username', autofocus: !v.email })}
            ${field({ name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'current-password', autofocus: !!v.email })}
            <button type="submit" class="btn btn-primary btn-block">Sign in</button>
          </form>
        </div>
      </div>
      ${v.allowSignup ? html`<p class="auth-foot">New here? <a href="${urls.signUp}">Create an account</a></p>` : ''}`,
  );
}

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

export function signInRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;

  app.get(urls.signIn, async (req, reply) => {
    const token = req.cookies[deps.cookies.session];
    if (token && (await loadSession(ctx.sql, token, { now: ctx.now(), ttlHours: ctx.config.SESSION_TTL_HOURS }))) {
      return reply.redirect(localPath(queryText(req, 'next')) ?? urls.home, 303);
    }
    const notice = queryText(req, 'signed_out')
      ? 'You have been signed out.'
      : queryText(req, 'expired')
        ? 'Your session has ended. Please sign in again.'
        : undefined;
    return sendHtml(
      reply,
      signInPage(deps, {
        csrf: preSessionToken(req, reply, deps),
        next: localPath(queryText(req, 'next')),
        allowSignup: ctx.config.ALLOW_SIGNUP,
        ...(notice ? { notice } : {}),
      }),
    );
  });

  app.post(urls.signIn, async (req, reply) => {
    if (!signedOutFormValid(req, deps)) return sendHtml(reply, formExpiredPage(deps), 403);
    const form = formOf(req);
    const email = text(form, 'email').slice(0, 320);
    const password = typeof form.password === 'string' ? form.password : '';
    const next = localPath(text(form, 'next'));
    const csrf = preSessionToken(req, reply, deps);
    const again = (status: number, error: string) =>
      sendHtml(reply, signInPage(deps, { csrf, email, next, error, allowSignup: ctx.config.ALLOW_SIGNUP }), status);
    if (!email || !password) return again(422, 'Enter your email and password.');

    const now = ctx.now();
    const reservation = await reserveSignIn(ctx.sql, email, req.ip, now);
    if (!reservation.allowed) {
      const minutes = Math.ceil(reservation.retryAfterSeconds / 60);
      void reply.header('retry-after', String(reservation.retryAfterSeconds));
      req.log.warn({ ip: req.ip, by: reservation.by }, 'sign-in throttled');
      return again(429, `Too many sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`);
    }

    const [user] = await ctx.sql<{ id: string; password_hash: string }[]>`
      select id, password_hash from users where lower(email) = lower(${email})`;
    dummyHash ??= hashPassword(randomToken());
    const ok = await verifyPassword(password, user?.password_hash ?? (await dummyHash));
    if (!user || !ok) return again(401, 'Wrong email or password.');

    await signInSucceeded(ctx.sql, reservation, now);
    // A new session on every sign-in (never a session id chosen before authentication).
    const previous = req.cookies[deps.cookies.session];
    if (previous) await destroySession(ctx.sql, previous);
    const session = await createSession(ctx.sql, {
      userId: user.id,
      userAgent: req.headers['user-agent'],
      ip: req.ip,
      ttlHours: ctx.config.SESSION_TTL_HOURS,
      now,
    });
    setSessionCookie(reply, deps, session.token, session.expiresAt, now);
    setPreSessionCookie(reply, deps, randomToken());
    await purgeExpiredSessions(ctx.sql, now);
    await purgeSignInAttempts(ctx.sql, now);
    req.log.info({ userId: user.id }, 'signed in');
    return reply.redirect(next ?? urls.home, 303);
  });
}

/** Sign out (a signed-in route: it needs the session's CSRF token). */
export function signOutRoute(app: App, deps: WebDeps): void {
  app.post(urls.signOut, async (req, reply) => {
    const token = req.cookies[deps.cookies.session];
    if (token) await destroySession(deps.ctx.sql, token);
    clearSessionCookie(reply, deps);
    return reply.redirect(`${urls.signIn}?signed_out=1`, 303);
  });
}
