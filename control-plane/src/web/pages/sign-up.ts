import { z } from 'zod';
import { createUser } from '../../accounts/service.ts';
import { reserveSignUp } from '../../accounts/throttle.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import type { App } from '../../platform/http/context.ts';
import { csrfInput, field } from '../components.ts';
import { sendHtml, text, type Form, type WebDeps } from '../context.ts';
import { submitForm } from '../form.ts';
import { html, type Html } from '../html.ts';
import { authPage } from '../layout.ts';
import { preSessionToken, startSession } from '../signed-out.ts';
import { urls } from '../urls.ts';

const SignUpForm = z.object({
  email: z.email().max(320),
  password: z.string().min(10, 'Use at least 10 characters.').max(200),
  organization: z.string().trim().max(255),
});

const valuesOf = (form: Form) => ({ email: text(form, 'email'), organization: text(form, 'organization') });

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
    const now = ctx.now();
    return submitForm(req, reply, deps, {
      signedOut: true,
      schema: SignUpForm,
      input: (form) => ({ ...valuesOf(form), password: typeof form.password === 'string' ? form.password : '' }),
      show: (form, errors, status) => sendHtml(reply, signUpPage(deps, preSessionToken(req, reply, deps), valuesOf(form), errors), status),
      save: async (data) => {
        // Sign-ups count against the address's sign-in budget, so accounts cannot be mass-created.
        const reservation = await reserveSignUp(ctx.sql, req.ip, now);
        if (!reservation.allowed)
          throw new AppError('RATE_LIMITED', 'Too many attempts from your address. Try again later.', undefined, {
            'retry-after': String(reservation.retryAfterSeconds),
          });
        return createUser(ctx.sql, {
          email: data.email,
          password: data.password,
          ...(data.organization ? { organization: data.organization } : {}),
        });
      },
      shown: { RATE_LIMITED: 'email', CONFLICT: ['email', 'An account with this email already exists. Sign in instead.'] },
      done: async ({ user_id: userId }) => {
        await startSession(req, reply, deps, userId, now);
        req.log.info({ userId }, 'signed up');
        return reply.redirect(urls.home, 303);
      },
    });
  });
}
