import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../platform/errors.ts';

/** A tool's answer: the data as JSON text, which every client shows and every model reads. */
export function ok(data: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(data, null, 2) }] };
}

/**
 * Errors the REST API would answer with (403, 404, 422) become tool errors with the same
 * message, so the model can correct itself; anything else is ours and propagates.
 */
export async function run(fn: () => Promise<unknown>): Promise<CallToolResult> {
  try {
    return ok(await fn());
  } catch (err) {
    if (err instanceof AppError) {
      const body = err.errors
        ? { status: err.status, message: err.message, errors: err.errors }
        : { status: err.status, message: err.message };
      return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
    }
    throw err;
  }
}
