import { AppError } from '../errors.ts';
import type { App } from './context.ts';

/**
 * The path of the first string holding a NUL character, which Postgres text cannot store.
 * Iterative (an explicit stack, paths built on the way back only for the hit), so no input,
 * however deeply nested, can exhaust the call stack here.
 */
export function findNul(value: unknown): string[] | undefined {
  type Frame = { value: unknown; key: string; parent: Frame | undefined };
  const pathOf = (f: Frame | undefined, last?: string): string[] => {
    const path = last === undefined ? [] : [last];
    for (let at = f; at?.parent; at = at.parent) path.push(at.key);
    return path.reverse();
  };
  const stack: Frame[] = [{ value, key: '', parent: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const v = frame.value;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return pathOf(frame);
      continue;
    }
    if (!v || typeof v !== 'object') continue;
    const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v);
    // eslint-disable-next-line no-control-regex -- NUL is the character looked for
    for (const [k] of entries) if (k.includes('\u0000')) return pathOf(frame, k.replace(/\u0000/g, '\\0'));
    // Reversed onto the stack, so the first field is looked at first.
    for (let i = entries.length - 1; i >= 0; i--) stack.push({ value: entries[i]![1], key: entries[i]![0], parent: frame });
  }
  return undefined;
}

/** Refuses NUL characters anywhere in a query or body with a 422 naming the field, before any handler runs. */
export function installNulGuard(app: App): void {
  app.addHook('preValidation', async (req) => {
    for (const [part, fallback] of [
      [req.query, 'query'],
      [req.body, 'body'],
    ] as const) {
      const hit = findNul(part);
      if (hit) {
        const field = hit.join('.') || fallback;
        const message = `The ${field} field must not contain NUL characters.`;
        throw new AppError('VALIDATION', message, { [field]: [message] });
      }
    }
  });
}
