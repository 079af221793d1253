import type { FastifyReply } from 'fastify';
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { WebDeps } from './context.ts';

/**
 * With an https PUBLIC_URL the cookies are Secure and carry the `__Host-` prefix, which browsers
 * only accept from a secure origin, for path /, without a Domain: no subdomain can plant one.
 */
export function cookieNames(publicUrl: string): WebDeps['cookies'] {
  const secure = publicUrl.startsWith('https://');
  const prefix = secure ? '__Host-' : '';
  return { secure, session: `${prefix}uptime_session`, preSession: `${prefix}uptime_csrf` };
}

function options(deps: WebDeps, maxAgeSeconds?: number): CookieSerializeOptions {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: deps.cookies.secure,
    ...(maxAgeSeconds !== undefined ? { maxAge: maxAgeSeconds } : {}),
  };
}

export function setSessionCookie(reply: FastifyReply, deps: WebDeps, token: string, expiresAt: Date, now: Date): void {
  void reply.setCookie(deps.cookies.session, token, options(deps, Math.max(1, Math.floor((expiresAt.getTime() - now.getTime()) / 1000))));
}

export function clearSessionCookie(reply: FastifyReply, deps: WebDeps): void {
  void reply.clearCookie(deps.cookies.session, options(deps));
}

export function setPreSessionCookie(reply: FastifyReply, deps: WebDeps, value: string): void {
  void reply.setCookie(deps.cookies.preSession, value, options(deps));
}
