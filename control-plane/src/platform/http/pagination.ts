import { z } from 'zod';
import { queryInt } from './params.ts';

export const DEFAULT_PER_PAGE = 25;
export const MAX_PER_PAGE = 100;

/** `page` (>= 1, default 1) and the `per_page` extension (1..100, default 25). */
export const PageQuery = z.object({
  page: queryInt({ min: 1, default: 1 }),
  per_page: queryInt({ min: 1, max: MAX_PER_PAGE, default: DEFAULT_PER_PAGE }),
});
export type PageQuery = z.infer<typeof PageQuery>;

export const PageMeta = z.object({
  current_page: z.number().int(),
  per_page: z.number().int(),
  total: z.number().int(),
  last_page: z.number().int(),
});
export type PageMeta = z.infer<typeof PageMeta>;

export function pageMeta(q: PageQuery, total: number): PageMeta {
  return {
    current_page: q.page,
    per_page: q.per_page,
    total,
    last_page: Math.max(1, Math.ceil(total / q.per_page)),
  };
}

export const offsetOf = (q: PageQuery) => (q.page - 1) * q.per_page;

export function listEnvelope<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), meta: PageMeta });
}
