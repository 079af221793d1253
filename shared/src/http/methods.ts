import type { Socket } from 'node:net';
import FindMyWay from 'find-my-way';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify';
import type { AnyFastify } from '../health.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route only answers 405 for its method: the method is not one the path has. */
    refusesMethod?: boolean;
  }
}

/** The order methods are named in `Allow`: the ones a client acts with, then HEAD, then the rest. */
const allowOrder = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'QUERY'];
const rank = (m: string) => (allowOrder.includes(m) ? allowOrder.indexOf(m) : allowOrder.length);

/**
 * The addresses a route answers at. A route at its plugin's prefix (`/docs` for `/` under
 * `/docs`) also answers with a trailing slash, and Fastify announces only the first of the two.
 */
export function routeUrls(r: RouteOptions): string[] {
  const { prefix, routePath } = r as RouteOptions & { prefix?: string; routePath?: string };
  const both = (r.prefixTrailingSlash ?? 'both') === 'both';
  return prefix && routePath === '' && both && [r.method].flat()[0] !== 'HEAD' ? [r.url, `${r.url}/`] : [r.url];
}

export interface MethodTable {
  /** The methods `path` (a request URL) is served with, in `Allow` order; empty for an unknown path. */
  allowed(url: string): string[];
}

/**
 * A second router holding every route of `app` as it is registered, so that a request the real
 * router could not match can be told apart: a path that exists under other methods (405) or no
 * path at all (404). Routes that only refuse their method do not count as the path's methods.
 */
export function recordMethods(app: AnyFastify): MethodTable {
  const { caseSensitive, ignoreTrailingSlash, ignoreDuplicateSlashes, maxParamLength } = app.initialConfig as Record<string, unknown>;
  const router = FindMyWay({
    caseSensitive: caseSensitive as boolean,
    ignoreTrailingSlash: ignoreTrailingSlash as boolean,
    ignoreDuplicateSlashes: ignoreDuplicateSlashes as boolean,
    maxParamLength: maxParamLength as number,
  });
  const methods = new Set<string>();
  app.addHook('onRoute', (r: RouteOptions) => {
    for (const method of [r.method].flat()) {
      methods.add(method);
      // The flag is read when asked: a scope's own onRoute hook may set it after this one ran.
      const store = { refuses: () => r.config?.refusesMethod === true };
      for (const url of routeUrls(r)) router.on(method as 'GET', url, () => undefined, store);
    }
  });
  return {
    allowed(url) {
      const found: string[] = [];
      for (const method of methods) {
        const hit = router.find(method as 'GET', url);
        if (hit && !(hit.store as { refuses(): boolean }).refuses()) found.push(method);
      }
      return found.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    },
  };
}

export interface RoutingRefusals {
  /** The error a method the path does not have becomes; the scope's error handler renders it. */
  methodNotAllowed(allow: string): Error;
  /**
   * The error an address no route has becomes. Given, such a request is answered before its body
   * is read or judged (a QUERY without a content type, a malformed body): a 404 whatever was sent.
   */
  notFound?(): Error;
}

/**
 * Answers a method a path does not have with 405 and an `Allow` naming the methods it has,
 * however the path is otherwise protected (routing comes before credentials), before any body is
 * read; a path that does not exist stays a 404. One hook for the whole application, so routes
 * need not refuse methods of their own (one that does is marked with `markRefusals`).
 */
export function installMethodNotAllowed(app: AnyFastify, refusals: RoutingRefusals): MethodTable {
  const table = recordMethods(app);
  // A callback hook, not an async one: it runs for every request, pings included.
  app.addHook('onRequest', (req: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
    if (!req.is404) return done();
    const allow = table.allowed(req.url);
    if (allow.length > 0) return done(refusals.methodNotAllowed(allow.join(', ')));
    done(refusals.notFound?.());
  });
  // A method the HTTP parser does not know is refused before Fastify sees a request: 501 (RFC
  // 9110, 15.6.2) instead of Node's generic 400. Ahead of Fastify's own handler, which then
  // finds the socket closed.
  app.server.prependListener('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code !== 'HPE_INVALID_METHOD' || !socket.writable) return;
    const body = JSON.stringify({ message: 'Method not implemented' });
    // Written and closed as Node and Fastify do with their own 400.
    socket.write(
      `HTTP/1.1 501 Not Implemented\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    socket.destroy();
  });
  return table;
}

/** Marks the routes of this scope that only refuse `methods` (with a 405 of their own). */
export function markRefusals(scope: AnyFastify, methods: readonly string[]): void {
  scope.addHook('onRoute', (r: RouteOptions) => {
    if ([r.method].flat().every((m) => methods.includes(m))) r.config = { ...r.config, refusesMethod: true } as RouteOptions['config'];
  });
}

/** The 405 error for a scope whose error handler is Fastify's own. */
export function methodNotAllowedError(allow: string): Error {
  return Object.assign(new Error('Method not allowed'), { statusCode: 405, headers: { allow } });
}
