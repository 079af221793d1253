import { AppError } from '../errors.ts';
import type { App } from './context.ts';

/** The path of the first string holding a NUL character, which Postgres text cannot store. */
export function findNul(value: unknown, path: string[] = []): string[] | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = findNul(value[i], [...path, String(i)]);
      if (hit) return hit;
    }
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\u0000')) return [...path, k.replace(/\u0000/g, '\\0')];
      const hit = findNul(v, [...path, k]);
      if (hit) return hit;
    }
  }
  return undefined;
}

/** Refuses NUL characters anywhere in a query or body with a 422 naming the field, before any handler runs. */
export function installNulGuard(app: App): void {
  app.addHook('preValidation', async (req) => {
    for (const [part, fallback] of [[req.query, 'query'], [req.body, 'body']] as const) {
      const hit = findNul(part);
      if (hit) {
        const field = hit.join('.') || fallback;
        const message = `The ${field} field must not contain NUL characters.`;
        throw new AppError('VALIDATION', message, { [field]: [message] });
      }
    }
  });
}
