import type { RouteOptions } from 'fastify';
import { routeUrls } from '../../../../shared/src/http/methods.ts';
import type { App } from './context.ts';

/**
 * How a route authenticates its caller: a REST API token (`bearer`), a dashboard session cookie
 * with its CSRF token on forms (`session`), an MCP token (`mcp`), or nobody (`public`: health,
 * documentation, ping and notify URLs, status pages, badges, sign-in).
 */
export type RouteAuth = 'bearer' | 'session' | 'mcp' | 'public';

export interface RouteInfo {
  method: string;
  url: string;
  readonly auth: RouteAuth;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route of the application, so that suites can cover each one (a new route cannot be forgotten). */
    routeTable: RouteInfo[];
  }
  interface FastifyContextConfig {
    auth?: RouteAuth;
  }
}

/** Records every route registered from now on, on the app and in every plugin below it. */
export function recordRoutes(app: App): void {
  const table: RouteInfo[] = [];
  app.decorate('routeTable', table);
  app.addHook('onRoute', (r: RouteOptions) => {
    for (const method of [r.method].flat()) {
      for (const url of routeUrls(r)) {
        // Read lazily: a plugin's own onRoute hook may mark the route after this one ran.
        table.push({
          method,
          url,
          get auth() {
            return (r.config as { auth?: RouteAuth } | undefined)?.auth ?? 'public';
          },
        });
      }
    }
  });
}

/** Marks every route registered in this scope (and below it) as authenticated by `auth`. */
export function markRoutes(scope: App, auth: Exclude<RouteAuth, 'public'>): void {
  scope.addHook('onRoute', (r: RouteOptions) => {
    r.config = { ...(r.config as object), auth } as RouteOptions['config'];
  });
}

/** Marks every route registered in this scope as one that needs a REST API token. */
export function markBearerRoutes(scope: App): void {
  markRoutes(scope, 'bearer');
}
