import { z } from 'zod';

/**
 * A whole number from a query string: "2" is 2, while "2.5", "-1", "1e3" and "" are refused
 * (a plain coercion would let some through).
 */
export function queryInt(opts: { min: number; max?: number; default: number }) {
  return z.preprocess(
    (v) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v === undefined ? undefined : v),
    z
      .number({
        error: (iss) =>
          iss.code === 'invalid_type' && iss.input !== undefined
            ? `The ${String(iss.path?.join('.') ?? 'value')} field must be an integer.`
            : undefined,
      })
      .int()
      .min(opts.min)
      .max(opts.max ?? Number.MAX_SAFE_INTEGER)
      .default(opts.default),
  );
}

export const IdParams = z.object({ id: z.uuid() });
