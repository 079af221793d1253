import { z } from 'zod';
import { MAX_JSON_DEPTH } from '../../../../shared/src/json-depth.ts';

export const MessageBody = z.object({ message: z.string() }).meta({ id: 'Message' });

export const ValidationErrorBody = z
  .object({
    message: z.string(),
    errors: z.record(z.string(), z.array(z.string())).describe('Field path (such as `valid_http_codes.0`) to its problems.'),
  })
  .meta({ id: 'ValidationError' });

export function dataEnvelope<T extends z.ZodType>(item: T) {
  return z.object({ data: item });
}

export function messageEnvelope<T extends z.ZodType>(item: T) {
  return z.object({ message: z.string(), data: item });
}

/** The error answers every authenticated route may give, for the OpenAPI document. */
export const authErrors = {
  401: MessageBody.describe('`{"message":"Unauthorized"}`: token missing, unknown, revoked, or not sent as `Bearer <token>`.'),
  403: MessageBody.describe('`{"message":"Unauthorized access"}`: the organization or project is not one of yours.'),
} as const;

export const notFoundError = { 404: MessageBody.describe('`{"message":"Not found"}`') } as const;
export const validationErrors = {
  400: MessageBody.describe(`Malformed JSON body, or one nesting arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`),
  422: ValidationErrorBody,
} as const;
