import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { notFound } from '../platform/errors.ts';
import type { HeartbeatContext } from '../heartbeats/service.ts';
import type { Html } from './html.ts';
import type { AssetHrefs } from './layout.ts';
import type { WebSession } from '../accounts/sessions.ts';

/** What the dashboard needs: the API's context (its pages call the same services). */
export type WebContext = HeartbeatContext;

export interface WebDeps {
  ctx: WebContext;
  assets: AssetHrefs;
  cookies: CookieNames & { secure: boolean };
}

export interface CookieNames {
  session: string;
  /** The double-submit CSRF cookie of signed-out forms (sign in, sign up). */
  preSession: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    webSession?: WebSession;
  }
}

export function sessionOf(req: FastifyRequest): WebSession {
  if (!req.webSession) throw new Error('a signed-in route ran without a session');
  return req.webSession;
}

export function sendHtml(reply: FastifyReply, page: Html, status = 200): FastifyReply {
  return reply.code(status).header('content-type', 'text/html; charset=utf-8').send(page.value);
}

const uuid = z.uuid();

/** The `:id` of a path; anything that is not a UUID names nothing: 404. */
export function idParam(req: FastifyRequest, name = 'id'): string {
  const value = (req.params as Record<string, string | undefined>)[name];
  if (!uuid.safeParse(value).success) throw notFound();
  return value!;
}

export type Form = Record<string, string | string[] | undefined>;

/**
 * The fields of a form post. A body of another type (JSON parses too) keeps only what a form could
 * have sent, strings and lists of strings, so a number or an object where text is expected is an
 * empty field (a 4xx), not a crash.
 */
export function formOf(req: FastifyRequest): Form {
  const body = req.body;
  if (!body || typeof body !== 'object' || Array.isArray(body)) return {};
  // No prototype: a field named `__proto__` or `constructor` is a field like any other.
  const form: Form = Object.create(null) as Form;
  for (const [k, v] of Object.entries(body)) {
    if (typeof v === 'string') form[k] = v;
    else if (Array.isArray(v)) form[k] = v.filter((x): x is string => typeof x === 'string');
  }
  return form;
}

/** One value of a form field (the last, when a field is repeated), trimmed. */
export function text(form: Form, name: string): string {
  const v = form[name];
  return (Array.isArray(v) ? (v.at(-1) ?? '') : (v ?? '')).trim();
}

export function queryText(req: FastifyRequest, name: string): string | undefined {
  const v = (req.query as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v : undefined;
}

/** A path of ours to return to after signing in; anything else (another host, `//evil`) is ignored. */
export function localPath(next: string | undefined): string | undefined {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return undefined;
  return next;
}
