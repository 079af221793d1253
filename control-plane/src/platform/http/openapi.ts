import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { MAX_JSON_DEPTH } from '../../../../shared/src/json-depth.ts';
import { license, version } from '../../../../shared/src/version.ts';
import type { App } from './context.ts';
import { finishDocument, nulRule, type OpenApiDocument } from './openapi-document.ts';
import { operationIds, tags } from './operations.ts';

const description = `
The REST API of the uptime monitoring service.

**Authentication**: every request carries \`Authorization: Bearer <token>\` (an API token created in
the dashboard under Settings > API tokens, or with \`uptime token create\`). A missing, unknown or
revoked token, or any other form of the header, gets 401 \`{"message":"Unauthorized"}\`. A
\`project_id\` or \`organization_id\` that is not one of yours gets 403
\`{"message":"Unauthorized access"}\`. An id of a resource you cannot see gets 404
\`{"message":"Not found"}\`.

**Envelopes**: a read is \`{"data": ...}\`; a create or update \`{"message": "Monitor created
successfully", "data": ...}\` (Monitor/Heartbeat/Project, created/updated); a list
\`{"data": [...], "meta": {"current_page", "per_page", "total", "last_page"}}\` with \`page\` (>= 1)
and \`per_page\` (1..100, default 25).

**Errors**: validation failures are 422 \`{"message": "...", "errors": {"field.path": ["..."]}}\`;
malformed JSON, or JSON nesting arrays and objects more than ${MAX_JSON_DEPTH} levels deep, is 400
\`{"message"}\` (the message names the limit). Timestamps are UTC with six fractional digits and a \`Z\`.

**Strings**: ${nulRule} This holds for every operation, query parameters it does not declare
included.

**Methods**: a method a path does not have gets 405 \`{"message":"Method not allowed"}\` with an
\`Allow\` header naming the methods it has (before the token is checked); an unknown path is 404.

**Operation ids** are stable (\`listMonitors\`, \`createMonitor\`, \`getMonitor\`, \`updateMonitor\`,
\`deleteMonitor\`...: a verb, then the resource), so a generated client keeps its names across releases.
`.trim();

/**
 * The policy of `/docs` (Swagger UI), strict like the dashboard's. Swagger UI's own files load no
 * inline script; its one inline style is the `<style>` of the small logo its top bar draws, allowed
 * by its hash (a new Swagger UI that draws another fails test/web/docs.test.ts, which loads the page
 * and fails on any violation). "Try it out" calls the API at PUBLIC_URL, which may be another
 * origin than the one serving the page. The plugin's own policy (`staticCSP: true`) needs neither,
 * lets the page be framed and upgrades requests to https, which breaks the page on plain http.
 */
export function docsContentSecurityPolicy(publicUrl: string): string {
  return [
    "default-src 'self'",
    "img-src 'self' data:",
    `style-src 'self' '${SWAGGER_LOGO_STYLE}'`,
    "script-src 'self'",
    "script-src-attr 'none'",
    `connect-src 'self' ${new URL(publicUrl).origin}`,
    "font-src 'self' data:",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "object-src 'none'",
  ].join('; ');
}

/** sha256 of `.logo_small_svg__cls-2{fill:#fff}.logo_small_svg__cls-3{fill:#85ea2d}` (swagger-ui-standalone-preset.js). */
const SWAGGER_LOGO_STYLE = 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w=';

/** The OpenAPI 3.1 document, generated from the zod schemas that validate requests. */
export async function registerOpenApi(app: App, publicUrl: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'uptime API',
        version,
        description,
        license: { name: license, identifier: license },
        // The API a deployment serves is run by its operator: the contact is that deployment.
        contact: { name: 'uptime API', url: `${publicUrl.replace(/\/$/, '')}/docs` },
      },
      servers: [{ url: publicUrl }],
      tags: [...tags],
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API token (`upt_...`).' } },
      },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: (input) => finishDocument(jsonSchemaTransformObject(input) as OpenApiDocument, { operationIds, tags }),
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: docsContentSecurityPolicy(publicUrl),
    uiConfig: { docExpansion: 'list', deepLinking: true },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  // Built once at start-up: a documented route without its operationId stops the server here.
  app.addHook('onReady', async () => {
    app.swagger();
  });
}
