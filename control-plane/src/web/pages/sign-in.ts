import { z } from 'zod';
import { checkPassword } from '../../accounts/service.ts';
import { destroySession, loadSession, purgeExpiredSessions } from '../../accounts/sessions.ts';
import { purgeSignInAttempts, reserveSignIn, signInSucceeded } from '../../accounts/throttle.ts';
import { AppError } from '../../platform/errors.ts';
import type { App } from '../../platform/http/context.ts';
import { csrfInput, field } from '../components.ts';
import { clearSessionCookie } from '../cookies.ts';
import { localPath, queryText, sendHtml, text, type Form, type WebDeps } from '../context.ts';
import { submitForm } from '../form.ts';
import { html, type Html } from '../html.ts';
import { authPage } from '../layout.ts';
import { preSessionToken, startSession } from '../signed-out.ts';
import { urls } from '../urls.ts';

const missing = 'Enter your email and password.';
const Credentials = z.object({ email: z.string().min(1, missing), password: z.string().min(1, missing), next: z.string().optional() });
const emailOf = (form: Form) => text(form, 'email').slice(0, 320);

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
    const now = ctx.now();
    return submitForm(req, reply, deps, {
      signedOut: true,
      schema: Credentials,
      input: (form) => ({
        email: emailOf(form),
        password: typeof form.password === 'string' ? form.password : '',
        next: localPath(text(form, 'next')),
      }),
      show: (form, errors, status) =>
        sendHtml(
          reply,
          signInPage(deps, {
            csrf: preSessionToken(req, reply, deps),
            email: emailOf(form),
            next: localPath(text(form, 'next')),
            error: Object.values(errors).flat()[0]!,
            allowSignup: ctx.config.ALLOW_SIGNUP,
          }),
          status,
        ),
      save: async ({ email, password }) => {
        const reservation = await reserveSignIn(ctx.sql, email, req.ip, now);
        if (!reservation.allowed) {
          const minutes = Math.ceil(reservation.retryAfterSeconds / 60);
          req.log.warn({ ip: req.ip, by: reservation.by }, 'sign-in throttled');
          const message = `Too many sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
          throw new AppError('RATE_LIMITED', message, undefined, { 'retry-after': String(reservation.retryAfterSeconds) });
        }
        const userId = await checkPassword(ctx.sql, email, password);
        if (!userId) throw new AppError('UNAUTHORIZED', 'Wrong email or password.');
        await signInSucceeded(ctx.sql, reservation, now);
        return userId;
      },
      shown: { RATE_LIMITED: 'email', UNAUTHORIZED: 'email' },
      done: async (userId, { next }) => {
        // A new session on every sign-in (never a session id chosen before authentication).
        const previous = req.cookies[deps.cookies.session];
        if (previous) await destroySession(ctx.sql, previous);
        await startSession(req, reply, deps, userId, now);
        await purgeExpiredSessions(ctx.sql, now);
        await purgeSignInAttempts(ctx.sql, now);
        req.log.info({ userId }, 'signed in');
        return reply.redirect(next ?? urls.home, 303);
      },
    });
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
