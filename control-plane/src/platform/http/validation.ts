import type { FastifySchemaCompiler } from 'fastify';
import { z } from 'zod';

type Issue = z.core.$ZodRawIssue;

const kindOf: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  date: 'a valid date',
};

function attribute(path: readonly PropertyKey[] | undefined): string {
  return path && path.length > 0 ? path.map(String).join('.') : 'body';
}

/**
 * Readable messages for every validation failure, in the style of the error body
 * (`{"message", "errors": {"field": ["..."]}}`): they name the field, the way clients name it.
 * A message set on a schema itself wins over these.
 */
export function validationMessage(issue: Issue): string | undefined {
  const attr = attribute(issue.path);
  const input = issue.input;
  switch (issue.code) {
    case 'invalid_type': {
      if (input === undefined) return `The ${attr} field is required.`;
      if (input === null) return `The ${attr} field must not be null.`;
      const expected = issue.expected === 'number' && isIntegerSchema(issue) ? 'int' : String(issue.expected);
      return `The ${attr} field must be ${kindOf[expected] ?? `of type ${expected}`}.`;
    }
    case 'too_big': {
      const max = Number(issue.maximum);
      if (issue.origin === 'string') return `The ${attr} field must not be greater than ${max} characters.`;
      if (issue.origin === 'array' || issue.origin === 'set') return `The ${attr} field must not have more than ${max} items.`;
      return `The ${attr} field must not be greater than ${max}.`;
    }
    case 'too_small': {
      const min = Number(issue.minimum);
      if (issue.origin === 'string')
        return min <= 1 ? `The ${attr} field is required.` : `The ${attr} field must be at least ${min} characters.`;
      if (issue.origin === 'array' || issue.origin === 'set')
        return `The ${attr} field must have at least ${min} item${min === 1 ? '' : 's'}.`;
      return `The ${attr} field must be at least ${min}.`;
    }
    case 'invalid_format': {
      const format = (issue as { format?: string }).format;
      if (format === 'url') return `The ${attr} field must be a valid URL.`;
      if (format === 'uuid' || format === 'guid') return `The ${attr} field must be a valid UUID.`;
      if (format === 'datetime') return `The ${attr} field must be a valid ISO 8601 date-time.`;
      if (format === 'email') return `The ${attr} field must be a valid email address.`;
      return `The ${attr} field format is invalid.`;
    }
    case 'invalid_value':
      return `The selected ${attr} is invalid. Allowed: ${(issue.values as unknown[]).map(String).join(', ')}.`;
    case 'unrecognized_keys':
      return `Unknown field${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}.`;
    case 'not_multiple_of':
      return `The ${attr} field must be a multiple of ${String(issue.divisor)}.`;
    default:
      return undefined;
  }
}

/** Whether the schema that raised the issue takes integers only (`z.number().int()`): its number format says. */
function isIntegerSchema(issue: Issue): boolean {
  return issue.inst instanceof z.ZodNumber && issue.inst.format === 'safeint';
}

/**
 * Fastify validator: parses each request part with its zod schema and our messages. A failure
 * is handed on as the ZodError itself; the error handler turns it into a 422.
 */
export const validatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema }) =>
  (data) => {
    const result = schema.safeParse(data, { error: validationMessage });
    return result.success ? { value: result.data } : { error: result.error };
  };
