import { z } from 'zod';
import { createUser } from '../../accounts/service.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import type { App } from '../../platform/http/context.ts';
import { zodIssuesToErrors } from '../../platform/http/error-handler.ts';
import { validationMessage } from '../../platform/http/validation.ts';
import { csrfInput, field } from '../components.ts';
import { setPreSessionCookie, setSessionCookie } from '../cookies.ts';
import { formOf, sendHtml, text, type WebDeps } from '../context.ts';
import { html, type Html } from '../html.ts';
import { authPage } from '../layout.ts';
import { createSession, randomToken } from '../../accounts/sessions.ts';
import { reserveSignUp } from '../../accounts/throttle.ts';
import { urls } from '../urls.ts';
import { formExpiredPage, preSessionToken, signedOutFormValid } from './sign-in.ts';

const SignUpForm = z.object({
  email: z.email().max(320),
  password: z.string().min(10, 'Use at least 10 characters.').max(200),
  organization: z.string().trim().max(255),
});

function signUpPage(
  deps: WebDeps,
  csrf: string,
  values: { email?: string; organization?: string },
  errors?: Record<string, string[]>,
): Html {
  return authPage(
    deps.assets,
    'Create an account',
    html`<div class="card">
        <div class="card-body">
          <h1>Create an account</h1>
          <form method="post" action="${urls.signUp}" class="form">
            ${csrfInput(csrf)}
            ${field({ name: 'email', label: 'Email', type: 'email', value: values.email, required: true, autocomplete: 'username', errors })}
            ${field({ name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'new-password', help: 'At least 10 characters.', errors })}
            ${field({ name: 'organization', label: 'Organization name', value: values.organization, help: 'Optional. You can invite teammates to it later.', errors })}
            <button type="submit" class="btn btn-primary btn-block">Create account</button>
          </form>
        </div>
      </div>
      <p class="auth-foot">Already have an account? <a href="${urls.signIn}">Sign in</a></p>`,
  );
}

/** Sign-up exists only with ALLOW_SIGNUP: a new user, their organization and its Default project. */
export function signUpRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;

  app.get(urls.signUp, async (req, reply) => {
    if (!ctx.config.ALLOW_SIGNUP) throw notFound();
    return sendHtml(reply, signUpPage(deps, preSessionToken(req, reply, deps), {}));
  });

  app.post(urls.signUp, async (req, reply) => {
    if (!ctx.config.ALLOW_SIGNUP) throw notFound();
    if (!signedOutFormValid(req, deps)) return sendHtml(reply, formExpiredPage(deps), 403);
    const form = formOf(req);
    const values = { email: text(form, 'email'), organization: text(form, 'organization') };
    const csrf = preSessionToken(req, reply, deps);
    const parsed = SignUpForm.safeParse(
      { ...values, password: typeof form.password === 'string' ? form.password : '' },
      { error: validationMessage },
    );
    if (!parsed.success) return sendHtml(reply, signUpPage(deps, csrf, values, zodIssuesToErrors(parsed.error.issues)), 422);

    // Sign-ups count against the address's sign-in budget, so accounts cannot be mass-created.
    const now = ctx.now();
    const reservation = await reserveSignUp(ctx.sql, req.ip, now);
    if (!reservation.allowed) {
      void reply.header('retry-after', String(reservation.retryAfterSeconds));
      return sendHtml(reply, signUpPage(deps, csrf, values, { email: ['Too many attempts from your address. Try again later.'] }), 429);
    }
    let userId: string;
    try {
      const created = await createUser(ctx.sql, {
        email: parsed.data.email,
        password: parsed.data.password,
        ...(parsed.data.organization ? { organization: parsed.data.organization } : {}),
      });
      userId = created.user_id;
    } catch (err) {
      if (err instanceof AppError && err.code === 'CONFLICT') {
        return sendHtml(
          reply,
          signUpPage(deps, csrf, values, { email: ['An account with this email already exists. Sign in instead.'] }),
          409,
        );
      }
      throw err;
    }
    const session = await createSession(ctx.sql, {
      userId,
      userAgent: req.headers['user-agent'],
      ip: req.ip,
      ttlHours: ctx.config.SESSION_TTL_HOURS,
      now,
    });
    setSessionCookie(reply, deps, session.token, session.expiresAt, now);
    setPreSessionCookie(reply, deps, randomToken());
    req.log.info({ userId }, 'signed up');
    return reply.redirect(urls.home, 303);
  });
}
