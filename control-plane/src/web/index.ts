import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from '../platform/errors.ts';
import type { App } from '../platform/http/context.ts';
import { markRoutes } from '../platform/http/route-table.ts';
import { assetRoutes, loadAssets } from './assets.ts';
import { cookieNames, clearSessionCookie, setSessionCookie } from './cookies.ts';
import { crossSite, sameToken, submittedToken } from './csrf.ts';
import { queryText, type WebContext, type WebDeps } from './context.ts';
import { installWebErrorHandler, renderError } from './errors.ts';
import { loadSession, setFlash } from '../accounts/sessions.ts';
import { urls } from './urls.ts';
import { alertLinkRoutes } from './pages/alert-links.ts';
import { alertPanelRoutes } from './alert-panel.ts';
import { alertListRoutes } from './pages/alerts-list.ts';
import { signInRoutes, signOutRoute } from './pages/sign-in.ts';
import { signUpRoutes } from './pages/sign-up.ts';
import { overviewRoutes } from './pages/overview.ts';
import { monitorListRoutes } from './pages/monitors-list.ts';
import { monitorDetailRoutes } from './pages/monitor-detail.ts';
import { monitorFormRoutes } from './pages/monitor-form.ts';
import { heartbeatListRoutes } from './pages/heartbeats-list.ts';
import { heartbeatDetailRoutes } from './pages/heartbeat-detail.ts';
import { heartbeatFormRoutes } from './pages/heartbeat-form.ts';
import { maintenanceRoutes } from './pages/maintenance.ts';
import { maintenanceFormRoutes } from './pages/maintenance-form.ts';
import { tokenRoutes } from './pages/tokens.ts';
import { memberRoutes } from './pages/members.ts';
import { projectSettingsRoutes } from './pages/project-settings.ts';
import { statusPageRoutes } from './pages/status-page.ts';
import { statusPageHistoryRenderers, statusPageHistoryRoutes } from './pages/status-page-history.ts';
import { statusPageAccess } from './pages/status-page-access.ts';
import { statusPagesRoutes } from './pages/status-pages.ts';
import { statusPageFormRoutes } from './pages/status-page-form.ts';
import { statusPageIncidentsRoutes } from './pages/status-page-incidents.ts';
import { statusPageIncidentRoutes } from './pages/status-page-incident.ts';
import { statusPageSubscribeRoutes } from './pages/status-page-subscribe.ts';
import { statusPageSubscribersRoutes } from './pages/status-page-subscribers.ts';
import { badgeActionRoutes, badgeRoutes } from './pages/badges.ts';
import { switchRoutes } from './pages/switch.ts';
import { triggerRoutes } from './pages/triggers.ts';
import { integrationRoutes } from './pages/integrations.ts';

// Everything is served by us: scripts, styles and images from our own origin, nothing inline.
const contentSecurityPolicy = [
  "default-src 'self'",
  "img-src 'self' data:",
  "style-src 'self'",
  "script-src 'self'",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "object-src 'none'",
].join('; ');

/** The dashboard: server-rendered pages under /app (and / itself), public status pages and badges, assets. */
export async function registerWeb(app: App, ctx: WebContext): Promise<void> {
  const assets = loadAssets();
  const deps: WebDeps = {
    ctx,
    assets: { css: assets.href('app.css'), js: assets.href('app.js'), icon: assets.href('favicon.svg') },
    cookies: cookieNames(ctx.config.PUBLIC_URL),
  };

  await app.register(async (web: App) => {
    web.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true };
    });
    await web.register(cookie);
    await web.register(formbody, { bodyLimit: 256 * 1024 });
    web.addHook('onSend', async (_req, reply) => {
      void reply.header('content-security-policy', contentSecurityPolicy);
      void reply.header('x-content-type-options', 'nosniff');
      void reply.header('x-frame-options', 'DENY');
      void reply.header('referrer-policy', 'same-origin');
    });
    installWebErrorHandler(web, deps);
    // Addresses under /app that no route has are refused in this scope, so its error handler
    // answers them with a page (404, or 405 for a method the page does not take), not with JSON.
    await web.register(
      async (scope: App) => {
        scope.setNotFoundHandler(async () => {
          throw notFound();
        });
      },
      { prefix: '/app' },
    );
    // So are addresses under /status: a status page's own addresses (its history, its incidents)
    // answer a page whatever follows, even one a dot segment shortened to no route at all.
    await web.register(
      async (scope: App) => {
        scope.setNotFoundHandler(async () => {
          throw notFound();
        });
      },
      { prefix: '/status' },
    );

    assetRoutes(web, assets.files);
    const access = statusPageAccess(web, deps);
    const serveStatusPage = statusPageRoutes(web, deps, access, statusPageHistoryRenderers(deps));
    statusPageHistoryRoutes(web, deps, serveStatusPage);
    statusPageSubscribeRoutes(web, deps, access);
    badgeRoutes(web, deps, access);
    alertLinkRoutes(web, deps);
    signInRoutes(web, deps);
    signUpRoutes(web, deps);

    await web.register(async (signedIn: App) => {
      markRoutes(signedIn, 'session');
      signedIn.addHook('onRequest', async (req, reply) => requireSession(req, reply, deps));
      signedIn.addHook('preHandler', async (req, reply) => {
        if (req.method !== 'POST') return;
        if (crossSite(req) || !sameToken(submittedToken(req), req.webSession?.csrfToken)) {
          req.log.warn({ req }, 'form refused: CSRF token missing or wrong');
          return reply
            .code(403)
            .header('content-type', 'text/html; charset=utf-8')
            .send(renderError(deps, 403, 'This form has expired. Go back, reload the page and try again.').value);
        }
      });
      signOutRoute(signedIn, deps);
      switchRoutes(signedIn, deps);
      overviewRoutes(signedIn, deps);
      monitorListRoutes(signedIn, deps);
      monitorFormRoutes(signedIn, deps);
      monitorDetailRoutes(signedIn, deps);
      heartbeatListRoutes(signedIn, deps);
      heartbeatFormRoutes(signedIn, deps);
      heartbeatDetailRoutes(signedIn, deps);
      maintenanceRoutes(signedIn, deps);
      maintenanceFormRoutes(signedIn, deps);
      statusPagesRoutes(signedIn, deps);
      statusPageFormRoutes(signedIn, deps);
      statusPageIncidentsRoutes(signedIn, deps);
      statusPageIncidentRoutes(signedIn, deps);
      statusPageSubscribersRoutes(signedIn, deps);
      triggerRoutes(signedIn, deps);
      integrationRoutes(signedIn, deps);
      tokenRoutes(signedIn, deps);
      memberRoutes(signedIn, deps);
      projectSettingsRoutes(signedIn, deps);
      badgeActionRoutes(signedIn, deps);
      alertPanelRoutes(signedIn, deps);
      alertListRoutes(signedIn, deps);
    });
  });
}

/**
 * Loads the session of the cookie. Without one, a page redirects to sign-in (and back after),
 * while a live fragment or a form gets 401 / a redirect, so a script stops polling.
 */
async function requireSession(req: FastifyRequest, reply: FastifyReply, deps: WebDeps): Promise<FastifyReply | undefined> {
  const { ctx } = deps;
  const token = req.cookies[deps.cookies.session];
  const now = ctx.now();
  const loaded = token ? await loadSession(ctx.sql, token, { now, ttlHours: ctx.config.SESSION_TTL_HOURS }) : undefined;
  if (loaded) {
    req.webSession = loaded.session;
    if (loaded.extendedUntil && token) setSessionCookie(reply, deps, token, loaded.extendedUntil, now);
    // The notice is shown once: on the page this request renders.
    if (loaded.session.flash && req.method === 'GET' && !queryText(req, 'fragment')) {
      await setFlash(ctx.sql, loaded.session.id, null);
    } else {
      loaded.session.flash = null;
    }
    return undefined;
  }
  if (token) clearSessionCookie(reply, deps);
  if (req.method === 'GET' && queryText(req, 'fragment')) {
    return reply.code(401).header('content-type', 'text/plain; charset=utf-8').send('Signed out');
  }
  const next = req.method === 'GET' ? req.url : undefined;
  const params = new URLSearchParams();
  if (next && next !== urls.home) params.set('next', next);
  if (token) params.set('expired', '1');
  const query = params.toString();
  return reply.redirect(`${urls.signIn}${query ? `?${query}` : ''}`, 303);
}
