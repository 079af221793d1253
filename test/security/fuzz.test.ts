import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import type { App } from '../../control-plane/src/runtime/app.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { deepJsonTexts, expectSane, headerValue, junkJson, junkValue, RUNS, sharpFields, sharpJson } from './fuzz-kit.ts';

/**
 * Every REST route (from the route table) gets at least 1,000 generated bad bodies, 1,000 bad
 * queries and 1,000 bad header sets. Whatever comes in: no 5xx, and every error is a JSON body
 * with a `message`. The dashboard, `/mcp` and the public routes have files of their own.
 */
const expectJson = (app: App, opts: InjectOptions, what: string) => expectSane(app, opts, 'json', what);

const queryFields = ['page', 'per_page', 'project_id', 'organization_id', 'region'];

describe('fuzzing every REST route', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let app: App;
  let routes: { method: string; url: string }[];
  before(async () => {
    // The per-token rate limit would answer most of these with 429 before they reach validation.
    cp = await startTestControlPlane({ roles: ['api'], env: { API_RATE_LIMIT: '1000000' } });
    ada = await createAccount(cp.db.sql);
    app = cp.cp.app!;
    routes = app.routeTable.filter((r) => r.auth === 'bearer' && r.method !== 'HEAD' && r.method !== 'OPTIONS');
  });
  after(() => cp.stop());

  const idArb = fc.oneof(fc.uuid(), fc.string({ minLength: 1 }).map(encodeURIComponent));

  it('survives bad bodies on every route', async () => {
    for (const r of routes) {
      await fc.assert(
        fc.asyncProperty(
          idArb,
          fc.oneof(
            junkJson.map((v) => JSON.stringify(v) ?? 'null'),
            fc.string(),
          ),
          async (id, payload) => {
            await expectJson(
              app,
              {
                method: r.method as 'POST',
                url: r.url.replace(':id', id),
                payload,
                headers: { authorization: ada.auth, 'content-type': 'application/json' },
              },
              `${r.method} ${r.url} body ${payload.slice(0, 80)}`,
            );
          },
        ),
        {
          numRuns: RUNS,
          examples: [...deepJsonTexts, ...sharpJson.map((v) => JSON.stringify(v))].map((t) => [ada.project_id, t] as [string, string]),
        },
      );
    }
  });

  it('survives bad query strings on every route', async () => {
    for (const r of routes) {
      await fc.assert(
        fc.asyncProperty(
          fc.dictionary(fc.oneof(fc.constantFrom(...queryFields), fc.string()), junkValue, { maxKeys: 4 }),
          async (query) => {
            const qs = new URLSearchParams(query as Record<string, string>).toString();
            await expectJson(
              app,
              { method: r.method as 'GET', url: `${r.url.replace(':id', ada.project_id)}?${qs}`, headers: { authorization: ada.auth } },
              `${r.method} ${r.url}?${qs.slice(0, 80)}`,
            );
          },
        ),
        { numRuns: RUNS, examples: sharpFields(queryFields).map((q) => [q]) },
      );
    }
  });

  it('survives bad headers on every route', async () => {
    for (const r of routes) {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            headerValue,
            headerValue.map((v) => `Bearer ${v}`),
            fc.constant(ada.auth),
            fc.constant(`Bearer ${ada.mcpToken}`),
          ),
          fc.oneof(
            headerValue,
            fc.constantFrom(
              'application/json',
              'text/plain',
              'application/x-www-form-urlencoded',
              'multipart/form-data; boundary=x',
              'application/json; charset=latin1',
            ),
          ),
          fc.string(),
          async (authorization, contentType, payload) => {
            await expectJson(
              app,
              {
                method: r.method as 'POST',
                url: r.url.replace(':id', ada.project_id),
                payload,
                headers: { authorization, 'content-type': contentType },
              },
              `${r.method} ${r.url} auth=${authorization.slice(0, 40)} ct=${contentType}`,
            );
          },
        ),
        { numRuns: RUNS },
      );
    }
  });
});
