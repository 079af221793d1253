import type { FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { setFlash } from '../accounts/sessions.ts';
import { AppError, type ErrorCode } from '../platform/errors.ts';
import { zodIssuesToErrors } from '../platform/http/error-handler.ts';
import { validationMessage } from '../platform/http/validation.ts';
import { formOf, sendHtml, sessionOf, type Form, type WebDeps } from './context.ts';
import { formExpiredPage, signedOutFormValid } from './signed-out.ts';

/** Messages by field, named as the API's error body names them (`name`, `config.url`, `regions.0`). */
export type FieldErrors = Record<string, string[]>;

/** Where a form post goes once saved, with a notice for the page it lands on. */
export interface Saved {
  flash: string;
  to: string;
}

export interface FormPost<S extends z.ZodType, R> {
  /** The domain's schema for what the form sends: the API's, so both take the same input. */
  schema: S;
  /** The form's fields as the schema takes them. */
  input: (form: Form) => unknown;
  /** Problems the page finds itself in fields the schema only sees converted; shown with the schema's. */
  check?: (form: Form) => FieldErrors;
  /** The form again, with its messages under its fields, answered with `status`. */
  show: (form: Form, errors: FieldErrors, status: number) => FastifyReply | Promise<FastifyReply>;
  /** Calls the domain's service. */
  save: (data: z.output<S>) => Promise<R>;
  /**
   * Service errors shown on the form, besides a VALIDATION error naming its fields: the field
   * each code belongs under, and other words for it when the error's own are for API clients.
   */
  shown?: Partial<Record<ErrorCode, string | readonly [field: string, message: string]>>;
  /** After the save: a notice and the next page, or an answer of the page's own (a secret shown once). */
  done: (saved: R, data: z.output<S>) => Saved | FastifyReply | Promise<Saved | FastifyReply>;
  /** Sign-in and sign-up: their CSRF token is checked here (a signed-in form's, before every signed-in POST). */
  signedOut?: boolean;
}

/**
 * A form post, handled the way every dashboard form is: the fields are validated with the
 * domain's schema and the API's messages; what is wrong, there or in the service, shows the form
 * again with the messages under their fields; a save leaves a notice and redirects (303), so a
 * reload does not post again.
 */
export async function submitForm<S extends z.ZodType, R>(
  req: FastifyRequest,
  reply: FastifyReply,
  deps: WebDeps,
  post: FormPost<S, R>,
): Promise<FastifyReply> {
  if (post.signedOut && !signedOutFormValid(req, deps)) return sendHtml(reply, formExpiredPage(deps), 403);
  const form = formOf(req);
  const parsed = post.schema.safeParse(post.input(form), { error: validationMessage });
  const own = post.check?.(form) ?? {};
  if (!parsed.success) return post.show(form, Object.assign(zodIssuesToErrors(parsed.error.issues), own), 422);
  if (Object.keys(own).length > 0) return post.show(form, own, 422);
  let saved: R;
  try {
    saved = await post.save(parsed.data);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    const errors = errorsOnForm(err, post.shown);
    if (!errors) throw err;
    if (err.headers) void reply.headers(err.headers);
    return post.show(form, errors, err.status);
  }
  const next = await post.done(saved, parsed.data);
  if (!isSaved(next)) return next;
  await setFlash(deps.ctx.sql, sessionOf(req).id, next.flash);
  return reply.redirect(next.to, 303);
}

function errorsOnForm(err: AppError, shown: FormPost<z.ZodType, unknown>['shown']): FieldErrors | undefined {
  const place = shown?.[err.code];
  if (typeof place === 'string') return { [place]: [err.message] };
  if (place) return { [place[0]]: [place[1]] };
  return err.code === 'VALIDATION' ? err.errors : undefined;
}

function isSaved(next: Saved | FastifyReply): next is Saved {
  return 'flash' in next && 'to' in next;
}
