import multipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { parseBearer } from '../accounts/bearer.ts';
import { AppError } from '../platform/errors.ts';
import type { App } from '../platform/http/context.ts';
import { MessageBody, ValidationErrorBody } from '../platform/http/envelopes.ts';
import { IdParams } from '../platform/http/params.ts';
import { fireTrigger, type FireDeps } from './fire.ts';
import { FireAccepted } from './schemas.ts';

const BODY_LIMIT = 1024 * 1024;

const outcomeMessages = {
  dispatched: 'Notification accepted',
  paused: 'Trigger is paused: nothing was sent',
  no_integrations: 'Trigger has no active integration: nothing was sent',
} as const;

function field(source: unknown, name: string): unknown {
  return source && typeof source === 'object' && !Array.isArray(source) ? (source as Record<string, unknown>)[name] : undefined;
}

/** The message of a multipart form; a form the parser cannot read is a 400, not a fault of ours. */
async function multipartMessage(req: FastifyRequest): Promise<unknown> {
  let message: unknown;
  try {
    for await (const part of req.parts()) {
      if (part.type === 'field' && part.fieldname === 'message') message = part.value;
    }
  } catch (err) {
    const status = (err as { statusCode?: number }).statusCode;
    if (status && status >= 400 && status < 500) throw err;
    throw new AppError('MALFORMED_BODY', 'Malformed multipart body');
  }
  return message;
}

/** The message a body carries: a form field or JSON property `message`, or a text/plain body itself. */
async function bodyMessage(req: FastifyRequest): Promise<unknown> {
  if (req.isMultipart()) return multipartMessage(req);
  return typeof req.body === 'string' ? req.body : field(req.body, 'message');
}

function presentedTokens(req: FastifyRequest): string[] {
  const tokens: string[] = [];
  const bearer = parseBearer(req.headers.authorization);
  if (bearer) tokens.push(bearer);
  const query = field(req.query, 'token');
  if (typeof query === 'string' && query !== '') tokens.push(query);
  return tokens;
}

/**
 * `{trigger_base_url}/api/notify/<id>`: public (the id is the address, the optional token the
 * key), outside the bearer-token hook. GET or POST; the message comes from the body (a form
 * field, a JSON property or a text/plain body), else from the query string.
 */
export async function notifyUrlRoutes(app: App, deps: FireDeps): Promise<void> {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(String(body))));
  });
  await app.register(multipart, { limits: { fieldSize: BODY_LIMIT, fields: 50, files: 0, parts: 50 } });

  const schema = {
    tags: ['Notify URL'],
    summary: 'Fire a trigger: message in a form (urlencoded or multipart), JSON or text/plain body, or the query string',
    security: [],
    params: IdParams,
    response: {
      202: FireAccepted,
      401: MessageBody.describe('Protected trigger, token absent or wrong (Authorization: Bearer <token> or ?token=).'),
      404: MessageBody.describe('No trigger with this id.'),
      422: ValidationErrorBody.describe('message is not a string, or longer than 4000 characters.'),
      429: MessageBody.describe("Over the trigger's rate limit; Retry-After says in how many seconds to try again."),
    },
  };

  app.route({
    method: ['GET', 'POST'],
    url: '/api/notify/:id',
    // A HEAD must not fire the trigger: like every other method, it gets the application's 405.
    exposeHeadRoute: false,
    schema,
    handler: async (req, reply) => {
      const fromBody = await bodyMessage(req);
      const fired = await fireTrigger(deps, {
        triggerId: req.params.id,
        message: fromBody !== undefined ? fromBody : field(req.query, 'message'),
        tokens: presentedTokens(req),
        sourceAddress: req.ip ?? null,
        userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'].slice(0, 512) : null,
      });
      return reply
        .code(202)
        .send({ message: outcomeMessages[fired.outcome], data: { event_id: fired.event_id, integrations: fired.integrations } });
    },
  });
}
