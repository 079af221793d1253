import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import type { App } from '../../control-plane/src/runtime/app.ts';
import { apiClient } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import {
  contentTypes,
  deepJsonTexts,
  headerValue,
  idArb,
  junkJson,
  junkValue,
  RUNS,
  sharpFields,
  sharpJson,
  sharpValues,
} from './fuzz-kit.ts';
import { routesOf } from './routes.ts';

/**
 * `/mcp` gets 1,000 generated bad bodies (junk, malformed JSON-RPC, batches, every tool with junk
 * arguments), 1,000 bad query strings and 1,000 bad header sets on every method it has. Whatever
 * comes in: no 5xx, and every answer is JSON. The protocol's own answer to a bad request is a
 * JSON-RPC error object (`{"jsonrpc":"2.0","error":{"code","message"},"id"}`), which we accept as
 * the error shape here; what our hooks refuse before the protocol (no token, a body too large)
 * is the API's `{"message"}`. (The SDK answers a protocol request whose params fail its own schema
 * with -32603 and the list of issues; that one is accepted, any other -32603 is not.) A tool
 * that fails answers `isError` with our
 * `{"status","message"}` for a 4xx, or the SDK's "MCP error -32602" for arguments it refused;
 * any other text is a fault of ours surfacing as a tool error, and fails.
 */
const methods = [
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'prompts/list',
  'notifications/initialized',
  'logging/setLevel',
  'completion/complete',
];
const argNames = [
  'id',
  'project_id',
  'name',
  'url',
  'changes',
  'message',
  'token',
  'page',
  'per_page',
  'region',
  'limit',
  'grace_period',
  'cron_schedule',
  'interval',
  '__proto__',
];

interface RpcAnswer {
  jsonrpc?: unknown;
  id?: unknown;
  result?: { isError?: boolean; content?: { text?: string }[] };
  error?: { code?: unknown; message?: unknown };
}

function checkRpc(a: RpcAnswer, what: string): void {
  assert.equal(a.jsonrpc, '2.0', `${what}: ${JSON.stringify(a).slice(0, 200)}`);
  if (a.error !== undefined) {
    assert.equal(typeof a.error.code, 'number', what);
    assert.equal(typeof a.error.message, 'string', what);
    // The SDK answers a protocol request whose params fail its own schema with -32603 and the
    // list of issues; any other internal error would be a fault of ours.
    if (a.error.code === -32603)
      assert.ok(Array.isArray(JSON.parse(String(a.error.message))), `${what}: internal error ${String(a.error.message)}`);
    return;
  }
  if (a.result?.isError) {
    const text = a.result.content?.map((c) => c.text ?? '').join('\n') ?? '';
    if (text.startsWith('MCP error -32602:')) return;
    const body = JSON.parse(text) as { status?: number; message?: unknown };
    assert.ok(
      typeof body.status === 'number' && body.status >= 400 && body.status < 500 && typeof body.message === 'string',
      `${what}: tool error ${text.slice(0, 200)}`,
    );
  }
}

describe('fuzzing /mcp', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let app: App;
  let tools: string[];
  let routes: { method: string; url: string }[];
  let realIds: string[];

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    app = cp.cp.app!;
    routes = routesOf(app.routeTable, 'mcp').filter((r) => r.method !== 'HEAD');
    const api = apiClient(cp.url, ada.token);
    const project_id = ada.project_id;
    realIds = [
      project_id,
      (await api('POST', '/monitors', { project_id, name: 'm', url: 'https://m.example' })).body.data.id,
      (await api('POST', '/heartbeats', { project_id, name: 'h' })).body.data.id,
      (await api('POST', '/triggers', { project_id, name: 't', default_message: 'x' })).body.data.id,
    ];
    const listed = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: headersWith({}),
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    tools = (JSON.parse(listed.body).result.tools as { name: string }[]).map((t) => t.name);
  });
  after(() => cp.stop());

  const headersWith = (extra: Record<string, string>) => ({
    authorization: `Bearer ${ada.mcpToken}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...extra,
  });

  async function expectSaneMcp(opts: InjectOptions, what: string): Promise<void> {
    const res = await app.inject(opts);
    assert.ok(res.statusCode < 500, `${what} -> ${res.statusCode} ${res.body.slice(0, 300)}`);
    if (res.body === '') {
      assert.ok(res.statusCode === 202 || opts.method === 'HEAD', `${what} -> ${res.statusCode} with no body`);
      return;
    }
    assert.match(String(res.headers['content-type']), /^application\/json/, `${what} -> ${res.statusCode} ${res.headers['content-type']}`);
    const body = JSON.parse(res.body) as RpcAnswer | RpcAnswer[] | { message?: unknown };
    if (Array.isArray(body)) {
      for (const a of body) checkRpc(a, what);
    } else if ('jsonrpc' in body) {
      checkRpc(body, what);
    } else {
      assert.ok(res.statusCode >= 400, `${what} -> ${res.statusCode} ${res.body.slice(0, 200)}`);
      assert.equal(typeof (body as { message?: unknown }).message, 'string', `${what}: ${res.body.slice(0, 200)}`);
    }
  }

  const rpcRequest = () =>
    fc.record(
      {
        jsonrpc: fc.oneof(fc.constant('2.0'), junkValue, fc.anything({ maxDepth: 1 })),
        id: fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.anything({ maxDepth: 1 })),
        method: fc.oneof(fc.constantFrom(...methods), fc.string()),
        params: fc.oneof(
          fc.record(
            {
              name: fc.oneof(fc.constantFrom(...tools), fc.string()),
              arguments: fc.oneof(
                fc.dictionary(
                  fc.oneof(fc.constantFrom(...argNames), fc.string()),
                  fc.oneof(idArb(...realIds), fc.anything({ maxDepth: 2 })),
                  { maxKeys: 5 },
                ),
                fc.anything({ maxDepth: 2 }),
              ),
              _meta: fc.anything({ maxDepth: 1 }),
            },
            { requiredKeys: ['name'] },
          ),
          fc.anything({ maxDepth: 2 }),
        ),
      },
      { requiredKeys: [] },
    );

  it('survives bad bodies on every method', async () => {
    for (const r of routes) {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            rpcRequest().map((v) => ({ payload: JSON.stringify(v), type: 'application/json' })),
            fc.array(rpcRequest(), { maxLength: 4 }).map((v) => ({ payload: JSON.stringify(v), type: 'application/json' })),
            junkJson.map((v) => ({ payload: JSON.stringify(v) ?? 'null', type: 'application/json' })),
            fc.tuple(fc.string(), contentTypes).map(([payload, type]) => ({ payload, type })),
          ),
          async ({ payload, type }) => {
            await expectSaneMcp(
              { method: r.method as 'POST', url: r.url, payload, headers: headersWith({ 'content-type': type }) },
              `${r.method} ${r.url} ${type} ${payload.slice(0, 120)}`,
            );
          },
        ),
        {
          numRuns: RUNS,
          // Deep bodies first (fast-check runs at most numRuns examples), then every sharp name as
          // a method, as a tool's name and as an argument of every tool.
          examples: [
            ...deepJsonTexts,
            ...[
              ...sharpValues.map((method) => ({ jsonrpc: '2.0', id: 1, method })),
              ...sharpValues.map((name) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } })),
              ...tools.flatMap((name) =>
                [...sharpFields(argNames), ...sharpJson].map((args) => ({
                  jsonrpc: '2.0',
                  id: 1,
                  method: 'tools/call',
                  params: { name, arguments: args },
                })),
              ),
            ].map((v) => JSON.stringify(v)),
          ].map((payload) => [{ payload, type: 'application/json' }] as [{ payload: string; type: string }]),
        },
      );
    }
  });

  it('survives bad query strings on every method', async () => {
    for (const r of routes) {
      await fc.assert(
        fc.asyncProperty(
          fc.dictionary(fc.oneof(fc.constantFrom('sessionId', 'token', 'stream'), fc.string()), junkValue, { maxKeys: 4 }),
          async (query) => {
            const qs = new URLSearchParams(query as Record<string, string>).toString();
            const payload = r.method === 'POST' ? JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) : undefined;
            await expectSaneMcp(
              { method: r.method as 'POST', url: `${r.url}?${qs}`, payload, headers: headersWith({}) },
              `${r.method} ${r.url}?${qs.slice(0, 80)}`,
            );
          },
        ),
        { numRuns: RUNS, examples: sharpFields(['sessionId', 'token', 'stream']).map((q) => [q]) },
      );
    }
  });

  it('survives bad headers on every method', async () => {
    for (const r of routes) {
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            authorization: fc.oneof(
              fc.constant(`Bearer ${ada.mcpToken}`),
              headerValue,
              headerValue.map((v) => `Bearer ${v}`),
              fc.constant(ada.auth),
            ),
            accept: fc.oneof(
              headerValue,
              fc.constantFrom('application/json', 'text/event-stream', 'application/json, text/event-stream', '*/*', ''),
            ),
            'content-type': contentTypes,
            'mcp-protocol-version': fc.oneof(headerValue, fc.constantFrom('2025-06-18', '2025-03-26', '2024-11-05', '1999-01-01')),
            'mcp-session-id': headerValue,
            'last-event-id': headerValue,
          }),
          fc.oneof(fc.constant(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })), fc.string()),
          async (headers, payload) => {
            await expectSaneMcp(
              { method: r.method as 'POST', url: r.url, payload: r.method === 'POST' ? payload : undefined, headers },
              `${r.method} ${r.url} ${JSON.stringify(headers).slice(0, 160)}`,
            );
          },
        ),
        { numRuns: RUNS },
      );
    }
  });
});
