import type { IncomingMessage } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createAuthenticator, parseBearer } from '../accounts/bearer.ts';
import { AppError } from '../platform/errors.ts';
import type { HeartbeatContext } from '../heartbeats/service.ts';
import type { App } from '../platform/http/context.ts';
import { markRoutes } from '../platform/http/route-table.ts';
import { addressPolicy } from '../../../shared/src/net/lookup.ts';
import { createHttpClient } from '../notifications/channels/http.ts';
import { createChannels } from '../notifications/channels/index.ts';
import { buildMcpServer } from './server.ts';

const jsonRpcError = (message: string) => ({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });

/**
 * `/mcp`: the Model Context Protocol over Streamable HTTP, stateless (a new server and transport
 * per request, so any control-plane process can answer any request). Only an MCP token opens it.
 * POST is its only method: with no server-initiated stream (GET) and no session to end (DELETE),
 * the others get the application's 405 (Allow: POST), which is what the protocol asks for.
 */
export async function registerMcp(app: App, ctx: HeartbeatContext): Promise<void> {
  const auth = createAuthenticator({ sql: ctx.sql, log: ctx.log, kind: 'mcp', now: ctx.now });
  app.addHook('onClose', () => auth.stop());
  const http = createHttpClient(addressPolicy(ctx.config));
  const channels = createChannels({ http, smtp: { url: ctx.config.SMTP_URL, from: ctx.config.SMTP_FROM }, now: ctx.now });
  app.addHook('onClose', () => http.close());

  await app.register(async (scope: App) => {
    markRoutes(scope, 'mcp');
    scope.addHook('onRequest', async (req) => {
      try {
        req.principal = await auth.authenticate(req);
      } catch (err) {
        // RFC 6750: a 401 names the scheme it wants.
        if (err instanceof AppError && err.code === 'UNAUTHORIZED')
          throw new AppError('UNAUTHORIZED', undefined, undefined, { 'www-authenticate': 'Bearer realm="uptime-mcp"' });
        throw err;
      }
    });

    scope.post('/mcp', { schema: { hide: true } }, async (req, reply) => {
      const principal = req.principal!;
      const server = buildMcpServer({ ctx, principal, channels });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      const raw = req.raw as IncomingMessage & { auth?: AuthInfo };
      raw.auth = {
        token: parseBearer(req.headers.authorization) ?? '',
        clientId: principal.userId,
        scopes: [],
        extra: { tokenId: principal.tokenId },
      };
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      try {
        await server.connect(transport);
        await transport.handleRequest(raw, reply.raw, req.body);
      } catch (err) {
        req.log.error({ err }, 'MCP request failed');
        if (!reply.raw.headersSent) {
          reply.raw.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify(jsonRpcError('Internal server error')));
        }
      }
    });
  });
}
