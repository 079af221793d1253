import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { validationMessage } from '../../control-plane/src/platform/http/validation.ts';

const messageOf = (schema: z.ZodType, input: unknown) =>
  schema.safeParse({ field: input }, { error: validationMessage }).error?.issues.map((i) => i.message);

describe('validation messages', () => {
  const rows: [what: string, schema: z.ZodType, input: unknown, expected: string][] = [
    ['an integer field given text', z.number().int(), 'x', 'The field field must be an integer.'],
    ['an integer field with bounds given text', z.number().int().min(1).max(5), 'x', 'The field field must be an integer.'],
    ['an integer field given a fraction', z.number().int(), 1.5, 'The field field must be an integer.'],
    ['an optional integer field given text', z.number().int().optional(), 'x', 'The field field must be an integer.'],
    ['a number field given text', z.number(), 'x', 'The field field must be a number.'],
    ['a missing field', z.number().int(), undefined, 'The field field is required.'],
    ['a null field', z.string(), null, 'The field field must not be null.'],
    ['a string field given a number', z.string(), 1, 'The field field must be a string.'],
    ['a too long string', z.string().max(3), 'abcd', 'The field field must not be greater than 3 characters.'],
    ['a URL field given text', z.url(), 'nope', 'The field field must be a valid URL.'],
  ];
  for (const [what, schema, input, expected] of rows) {
    it(`words ${what}`, () => assert.deepEqual(messageOf(z.object({ field: schema }), input), [expected]));
  }
});
