import assert from 'node:assert/strict';
import { registerSecretsIn } from './secrets.ts';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A small client for the REST API: JSON in, JSON out, with a token. */
export function apiClient(baseUrl: string, token?: string) {
  return async function call<T = any>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiResponse<T>> {
    // Whatever secret goes in or comes out (a password, a trigger token) is searched for in the logs after the run.
    registerSecretsIn(body);
    const res = await fetch(baseUrl + path, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    const parsed = text ? JSON.parse(text) : null;
    registerSecretsIn(parsed);
    return { status: res.status, headers: res.headers, body: parsed };
  };
}

export type Call = ReturnType<typeof apiClient>;

export const timestampFormat = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** Asserts a 422 whose `errors` name exactly these fields. */
export function assertInvalid(res: ApiResponse, fields: string[]): void {
  assert.equal(res.status, 422, JSON.stringify(res.body));
  assert.equal(typeof res.body.message, 'string');
  assert.deepEqual(Object.keys(res.body.errors).sort(), [...fields].sort(), JSON.stringify(res.body.errors));
  for (const f of fields) assert.ok(res.body.errors[f].every((m: unknown) => typeof m === 'string' && m.length > 0));
}
