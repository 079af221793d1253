import type { FastifyError } from 'fastify';
import type { AnyFastify } from '../../../../shared/src/health.ts';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { ZodError } from 'zod';
import { databaseUnavailableMessage, isDatabaseUnavailable } from '../db/unavailable.ts';
import { AppError, errorCatalog } from '../errors.ts';

/** Field path as clients name it: `valid_http_codes.0`; the whole body is `body`. */
export function fieldPath(path: readonly PropertyKey[], fallback = 'body'): string {
  return path.length === 0 ? fallback : path.map(String).join('.');
}

export function zodIssuesToErrors(issues: ZodError['issues'], fallback = 'body'): Record<string, string[]> {
  // No prototype: a field path such as `__proto__` is a key like any other.
  const errors = Object.create(null) as Record<string, string[]>;
  for (const issue of issues) {
    const key = fieldPath(issue.path, fallback);
    (errors[key] ??= []).push(issue.message);
  }
  return errors;
}

/** The first problem, and how many more there are. */
export function summary(errors: Record<string, string[]>): string {
  const all = Object.values(errors).flat();
  if (all.length === 0) return errorCatalog.VALIDATION.message;
  return all.length > 1 ? `${all[0]} (and ${all.length - 1} more error${all.length > 2 ? 's' : ''})` : all[0]!;
}

const fastifyCodes: Record<string, keyof typeof errorCatalog> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'MALFORMED_BODY',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'MALFORMED_BODY',
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'MALFORMED_BODY',
};

/**
 * One place maps every failure to an HTTP answer. Bad input is always a 4xx with a JSON body
 * carrying `message`; only a fault of ours is a 500, and its details go to the log, not the client.
 */
export function installErrorHandler(app: AnyFastify): void {
  app.setErrorHandler((err: FastifyError | AppError | Error, req, reply) => {
    if (err instanceof AppError) {
      if (err.headers) void reply.headers(err.headers);
      return reply.code(err.status).send(err.errors ? { message: err.message, errors: err.errors } : { message: err.message });
    }
    if (hasZodFastifySchemaValidationErrors(err)) {
      const where = (err as FastifyError).validationContext ?? 'body';
      const errors: Record<string, string[]> = {};
      for (const v of err.validation) {
        const path = v.instancePath.replace(/^\//, '').split('/').filter(Boolean).join('.');
        (errors[path || where] ??= []).push(v.message ?? 'is invalid');
      }
      return reply.code(422).send({ message: summary(errors), errors });
    }
    if (err instanceof ZodError) {
      const context = (err as unknown as { validationContext?: string }).validationContext;
      // A malformed id in the path names no resource at all: the same answer as an unknown one.
      if (context === 'params') return reply.code(404).send({ message: errorCatalog.NOT_FOUND.message });
      const fallback = context === 'querystring' ? 'query' : context === 'headers' ? 'headers' : 'body';
      const errors = zodIssuesToErrors(err.issues, fallback);
      return reply.code(422).send({ message: summary(errors), errors });
    }
    const code = (err as FastifyError).code;
    const mapped = code ? fastifyCodes[code] : undefined;
    if (mapped) {
      const { status, message } = errorCatalog[mapped];
      return reply.code(status).send({ message });
    }
    const status = (err as FastifyError).statusCode;
    if (status && status >= 400 && status < 500 && !isResponseSerializationError(err)) {
      return reply.code(status).send({ message: err.message || 'Bad request' });
    }
    if (isDatabaseUnavailable(err)) {
      req.log.warn({ code: (err as { code?: string }).code }, 'request refused: the database is unavailable');
      return reply.code(503).header('retry-after', '5').send({ message: databaseUnavailableMessage });
    }
    req.log.error({ err }, 'request failed');
    return reply.code(500).send({ message: 'Internal server error' });
  });

  app.setNotFoundHandler((_req, reply) => reply.code(404).send({ message: errorCatalog.NOT_FOUND.message }));
}
