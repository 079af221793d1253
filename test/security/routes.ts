import type { RouteInfo } from '../../control-plane/src/platform/http/route-table.ts';

/**
 * What each route of the application promises a caller, by how it authenticates. Routes behind a
 * token or a session are covered by the generated matrices (`isolation-*.test.ts`, `fuzz*.test.ts`)
 * whatever their number; a public route must be listed here with the kind of answer it gives, so
 * a route added without an auth kind fails `route-coverage.test.ts` until someone decides.
 *
 * - `json`: errors are JSON with a `message` (the API's envelope).
 * - `text`: ping URLs answer short plain text (`OK`, `Not found`...), which cron jobs log as is;
 *   a request refused before the handler (a bad content type, a NUL) gets the API's JSON error.
 * - `html`: dashboard pages for signed-out visitors; errors are HTML pages.
 * - `file`: fixed files (assets, badges, API documentation); a missing one is a plain 404, a
 *   request refused before the handler gets the error of the scope serving it (JSON or a page).
 */
export type Answers = 'json' | 'text' | 'html' | 'file';

export interface PublicRoute {
  methods: readonly string[];
  answers: Answers;
  /** Why nobody needs to be signed in. */
  why: string;
}

const getHead = ['GET', 'HEAD'] as const;
const everyPingMethod = ['GET', 'POST', 'HEAD', 'PUT', 'PATCH', 'DELETE'] as const;

export const publicRoutes: Record<string, PublicRoute> = {
  '/healthz': { methods: getHead, answers: 'json', why: 'liveness probe of a load balancer' },
  '/readyz': { methods: getHead, answers: 'json', why: 'readiness probe of a load balancer' },
  '/metrics': { methods: getHead, answers: 'text', why: 'Prometheus scrape; counters only, no tenant data' },
  '/openapi.json': { methods: getHead, answers: 'json', why: 'the API description' },
  '/docs': { methods: getHead, answers: 'file', why: 'API documentation' },
  '/docs/': { methods: getHead, answers: 'file', why: 'API documentation' },
  '/docs/json': { methods: getHead, answers: 'json', why: 'API documentation' },
  '/docs/yaml': { methods: getHead, answers: 'file', why: 'API documentation' },
  '/docs/static/index.html': { methods: getHead, answers: 'file', why: 'API documentation' },
  '/docs/static/swagger-initializer.js': { methods: getHead, answers: 'file', why: 'API documentation' },
  '/docs/static/*': { methods: getHead, answers: 'file', why: 'API documentation' },
  '/heartbeat/:id': { methods: everyPingMethod, answers: 'text', why: 'ping URL: the unguessable heartbeat id is the address' },
  '/heartbeat/:id/:suffix': { methods: everyPingMethod, answers: 'text', why: 'start and fail ping URLs' },
  '/heartbeat/:id/snooze': {
    methods: ['GET', 'HEAD', 'POST'],
    answers: 'text',
    why: "a heartbeat's snooze URL: its signature (shown as snooze_url) is the key",
  },
  '/app/alerts/:id/acknowledge': {
    methods: ['GET', 'HEAD', 'POST'],
    answers: 'html',
    why: 'the acknowledge link of a message: its signature is the key; a GET only shows the button',
  },
  '/app/alerts/:id/snooze': {
    methods: ['GET', 'HEAD', 'POST'],
    answers: 'html',
    why: 'the snooze link of a message: its signature is the key; a GET only shows the buttons',
  },
  '/api/notify/:id': {
    methods: ['GET', 'POST'],
    answers: 'json',
    why: 'notify URL: the trigger id is the address, its optional token the key',
  },
  '/assets/:name': { methods: getHead, answers: 'file', why: 'stylesheet, script and icon of the dashboard' },
  '/status/:slug': { methods: getHead, answers: 'html', why: 'public status page at a 128-bit random slug, opt-in' },
  '/status/:slug/history': { methods: getHead, answers: 'html', why: "a public status page's published incidents by month, at its slug" },
  '/status/:slug/incidents/:id': { methods: getHead, answers: 'html', why: "a public status page's published incident, at its slug" },
  '/status/:slug/subscribe': {
    methods: ['POST'],
    answers: 'html',
    why: "a public status page's subscribe form: an email address is only sent a confirmation (double opt-in), limited per client",
  },
  '/status/subscriptions/:id/confirm': {
    methods: ['GET', 'HEAD', 'POST'],
    answers: 'html',
    why: 'the confirm link of a subscription email: its signature is the key; a GET only shows the button',
  },
  '/status/subscriptions/:id/unsubscribe': {
    methods: ['GET', 'HEAD', 'POST'],
    answers: 'html',
    why: 'the unsubscribe link of a subscriber message: its signature is the key; a POST is the one-click unsubscribe of RFC 8058',
  },
  '/status/:slug/feed.atom': {
    methods: getHead,
    answers: 'file',
    why: "a public status page's Atom feed of its published incidents, at its slug",
  },
  '/status/:slug/feed.rss': {
    methods: getHead,
    answers: 'file',
    why: "a public status page's RSS feed of its published incidents, at its slug",
  },
  '/status/:slug/summary.json': { methods: getHead, answers: 'file', why: "a public status page's state as JSON for widgets, at its slug" },
  '/status/:slug/access': {
    methods: ['POST'],
    answers: 'html',
    why: "a private status page's password form posts here; throttled per address like sign-in",
  },
  '/feed.atom': { methods: getHead, answers: 'file', why: "a status page's Atom feed at the page's own host name (404 at the app's)" },
  '/feed.rss': { methods: getHead, answers: 'file', why: "a status page's RSS feed at the page's own host name (404 at the app's)" },
  '/summary.json': {
    methods: getHead,
    answers: 'file',
    why: "a status page's JSON summary at the page's own host name (404 at the app's)",
  },
  '/badge/:file': { methods: getHead, answers: 'file', why: 'status badge at a 128-bit random slug, opt-in' },
  '/badge/:slug/:file': { methods: getHead, answers: 'file', why: 'status, uptime or response time badge (SVG or JSON) at a badge slug' },
  '/status/:slug/badge/:component/:file': {
    methods: getHead,
    answers: 'file',
    why: 'badge of a component of a public status page, at the page’s 128-bit random slug',
  },
  '/app/sign-in': { methods: ['GET', 'HEAD', 'POST'], answers: 'html', why: 'where a session starts (double-submit CSRF cookie)' },
  '/app/sign-up': { methods: ['GET', 'HEAD', 'POST'], answers: 'html', why: 'where an account starts (404 unless ALLOW_SIGNUP)' },
};

export const routeKey = (r: Pick<RouteInfo, 'method' | 'url'>) => `${r.method} ${r.url}`;

/** Every route of a kind, HEAD included (a HEAD must refuse what its GET refuses). */
export function routesOf(table: readonly RouteInfo[], auth: RouteInfo['auth']): { method: string; url: string }[] {
  return table.filter((r) => r.auth === auth).map((r) => ({ method: r.method, url: r.url }));
}
