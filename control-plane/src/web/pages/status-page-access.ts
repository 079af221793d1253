import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { verifyPassword } from '../../accounts/passwords.ts';
import { pagePasswordSucceeded, reservePagePassword } from '../../accounts/throttle.ts';
import type { App } from '../../platform/http/context.ts';
import { allowlistMatcher } from '../../status-pages/access.ts';
import { pageAccessAt } from '../../status-pages/service.ts';
import type { PageAccess } from '../../status-pages/snapshots.ts';
import { formOf, sendHtml, type WebDeps } from '../context.ts';
import { renderError } from '../errors.ts';
import { html } from '../html.ts';
import { publicPage } from '../layout.ts';
import { urls } from '../urls.ts';
import { hostName } from '../host.ts';

/**
 * Private status pages (ADR 0041): a page with an allow-list answers only its client addresses
 * (403 to others), a page with a password asks for it in a form and then lets in whoever holds
 * the signed cookie it sets (a day, scoped to the page's path, void once the password changes).
 * Every address of the page is gated the same way (the page, its fragment, history, incidents,
 * feeds, summary and badges), and every answer of a private page is `private, no-store`.
 *
 * Who may read a page comes with what the address reads anyway: the page's snapshot (so viewers
 * add no database work), or the page the history, an incident or a badge is read from.
 */

/** How the refusal reads where a person is not looking: a form for pages and feeds, a short text for data and images. */
export type AddressKind = 'html' | 'data';

/** The outcome: `public` (nothing to check), `granted` (a private page this client may read), `refused` (the reply is sent). */
export type Access = 'public' | 'granted' | 'refused';

export interface StatusPageAccess {
  /** Whether this client may read the page at `slug`, whose access is `access` (null: a public page); a refusal is sent. */
  check(req: FastifyRequest, reply: FastifyReply, slug: string, access: PageAccess | null, kind: AddressKind): Promise<Access>;
}

export const PRIVATE_CACHE_CONTROL = 'private, no-store';
const COOKIE = 'uptime_status_access';
const ACCESS_SECONDS = 24 * 3600;

/** Allow-lists as matchers, built once per list read (a snapshot's list is the same array while it lives). */
const matchers = new WeakMap<readonly string[], (ip: string) => boolean>();
function allowedBy(list: readonly string[], ip: string): boolean {
  let match = matchers.get(list);
  if (!match) {
    match = allowlistMatcher(list);
    matchers.set(list, match);
  }
  return match(ip);
}

/** The cookie's signature: the page, until when, and the password it was given for (a new password voids it). */
function signature(secret: Buffer, gate: PageAccess, until: number): string {
  return createHmac('sha256', secret).update(`status-page-access\n${gate.pageId}\n${until}\n${gate.passwordHash}`).digest('base64url');
}

function validCookie(secret: Buffer, gate: PageAccess, value: string | undefined, nowMs: number): boolean {
  const m = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value ?? '');
  if (!m) return false;
  const until = Number(m[1]);
  if (until * 1000 <= nowMs) return false;
  const expected = Buffer.from(signature(secret, gate, until));
  const given = Buffer.from(m[2]!);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** Where to go once the password is given: an address of this page, else the page itself. */
function nextOf(text: string | undefined, slug: string): string {
  const own = urls.statusPage(slug);
  if (!text || /[\\\s]|\/\/|\/\.\.?(\/|$|\?)/.test(text)) return own;
  if (text === own || text.startsWith(`${own}/`) || text.startsWith(`${own}?`)) return text;
  if (text === '/' || /^\/(\?fragment=1|feed\.atom|feed\.rss|summary\.json)$/.test(text)) return text;
  return own;
}

export function statusPageAccess(app: App, deps: WebDeps): StatusPageAccess {
  const { ctx } = deps;
  const secret = ctx.keys.statusPageAccess;

  const privateReply = (reply: FastifyReply) => reply.header('cache-control', PRIVATE_CACHE_CONTROL).header('vary', 'cookie');

  function passwordForm(reply: FastifyReply, slug: string, next: string, status: number, error?: string) {
    const body = html`<header class="public-head">
        <div><h1>This status page is private</h1></div>
        <span class="muted">Status</span>
      </header>
      <main id="main">
        <section class="card" aria-labelledby="password-heading">
          <div class="card-head"><h2 id="password-heading">Give its password to see it</h2></div>
          <div class="card-body">
            <form method="post" action="${urls.statusAccess(slug)}" class="form" novalidate>
              <input type="hidden" name="next" value="${next}" />
              <div class="field${error ? ' invalid' : ''}">
                <label for="f-password">Password</label>
                <input
                  id="f-password"
                  name="password"
                  type="password"
                  autocomplete="current-password"
                  required
                  autofocus
                  ${error ? html`aria-invalid="true" aria-describedby="password-error"` : ''}
                />
                ${error ? html`<div class="error" id="password-error" role="alert">${error}</div>` : ''}
              </div>
              <div class="actions"><button type="submit" class="btn btn-primary">See the page</button></div>
            </form>
          </div>
        </section>
      </main>`;
    return sendHtml(
      privateReply(reply),
      publicPage(deps.assets, 'Private status page', body, html`<meta name="robots" content="noindex" />`),
      status,
    );
  }

  function refuse(reply: FastifyReply, kind: AddressKind, status: 401 | 403, message: string) {
    privateReply(reply);
    if (kind === 'html') return sendHtml(reply, renderError(deps, status, message), status);
    return reply.code(status).type('text/plain; charset=utf-8').send(message);
  }

  const access: StatusPageAccess = {
    async check(req, reply, slug, gate, kind) {
      if (!gate) return 'public';
      if (gate.ipAllowlist && !allowedBy(gate.ipAllowlist, req.ip)) {
        req.log.info({ ip: req.ip }, 'status page refused: address not allowed');
        await refuse(reply, kind, 403, 'This status page is not shown to your network.');
        return 'refused';
      }
      if (gate.passwordHash && !validCookie(secret, gate, req.cookies[COOKIE], ctx.now().getTime())) {
        if (kind === 'html') await passwordForm(reply, slug, req.url, 401);
        else await refuse(reply, kind, 401, 'This status page asks for a password: open it in a browser first.');
        return 'refused';
      }
      privateReply(reply);
      return 'granted';
    },
  };

  app.post('/status/:slug/access', async (req, reply) => {
    const slug = (req.params as { slug: string }).slug;
    const form = formOf(req);
    const next = nextOf(typeof form['next'] === 'string' ? form['next'] : undefined, slug);
    const found = /^[A-Za-z0-9_-]{22}$/.test(slug) ? await pageAccessAt(ctx, slug) : undefined;
    if (!found) return sendHtml(reply, renderError(deps, 404, 'There is no status page at this address.'), 404);
    const gate = found.access;
    // A public page needs no password.
    if (!gate) return reply.redirect(next, 303);
    if (gate.ipAllowlist && !allowedBy(gate.ipAllowlist, req.ip))
      return refuse(reply, 'html', 403, 'This status page is not shown to your network.');
    if (!gate.passwordHash) return privateReply(reply).redirect(next, 303);
    const now = ctx.now();
    const reservation = await reservePagePassword(ctx.sql, gate.pageId, req.ip, now);
    if (!reservation.allowed) {
      const minutes = Math.ceil(reservation.retryAfterSeconds / 60);
      req.log.warn({ ip: req.ip, by: reservation.by }, 'status page password throttled');
      void reply.header('retry-after', String(reservation.retryAfterSeconds));
      return passwordForm(reply, slug, next, 429, `Too many attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`);
    }
    const password = typeof form['password'] === 'string' ? form['password'] : '';
    // No stored password is longer than 200 characters: a longer guess is wrong without hashing it.
    if (password.length > 200 || !(await verifyPassword(password, gate.passwordHash)))
      return passwordForm(reply, slug, next, 401, 'Wrong password.');
    await pagePasswordSucceeded(ctx.sql, reservation);
    const until = Math.floor(now.getTime() / 1000) + ACCESS_SECONDS;
    // At the page's own host name the whole host is the page's; at the app's address, only its path.
    const atOwnHost = found.customDomain !== null && hostName(req.headers.host) === found.customDomain;
    void reply.setCookie(COOKIE, `${until}.${signature(secret, gate, until)}`, {
      path: atOwnHost ? '/' : urls.statusPage(slug),
      httpOnly: true,
      sameSite: 'lax',
      secure: req.protocol === 'https',
      maxAge: ACCESS_SECONDS,
    });
    req.log.info({ pageId: gate.pageId }, 'status page password given');
    return privateReply(reply).redirect(next, 303);
  });

  return access;
}
