import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { App } from '../../control-plane/src/runtime/app.ts';
import { apiClient } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import {
  contentTypes,
  deepFormBody,
  deepJsonTexts,
  expectSane,
  formBody,
  headerValue,
  idArb,
  junkJson,
  junkValue,
  RUNS,
  sharpFields,
  sharpJson,
} from './fuzz-kit.ts';
import { publicRoutes, routesOf } from './routes.ts';
import { openTestAlert } from '../harness/alerts.ts';

/**
 * Every public route (ping URLs, notify URLs, status pages, badges, sign-in and sign-up, health,
 * metrics, documentation, assets) gets 1,000 generated bad bodies, 1,000 bad query strings and
 * 1,000 bad header sets, addressed at real and made-up ids. Whatever comes in: no 5xx, and an
 * error in the route's own kind of answer (`routes.ts`): JSON with a `message` for the notify URL
 * and the probes, plain text for ping URLs and files, an HTML page for the dashboard's pages.
 */
const formFields = ['message', 'token', '_csrf', 'email', 'password', 'next', 'organization'];
const queryFields = [
  'message',
  'token',
  'next',
  'v',
  'rid',
  'fragment',
  'expired',
  'signed_out',
  'url',
  'window',
  'stat',
  'label',
  'month',
  'sig',
];

describe('fuzzing every public route', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let app: App;
  let routes: { method: string; url: string }[];
  const real: Record<string, string[]> = {};

  before(async () => {
    // Token-protected, so most calls are refused after validation; the open one fires.
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    app = cp.cp.app!;
    const api = apiClient(cp.url, ada.token);
    const project_id = ada.project_id;
    const monitor = (await api('POST', '/monitors', { project_id, name: 'm', url: 'https://m.example' })).body.data.id;
    // Addresses of the shape the routes take (22 base64url characters), so the fuzz reaches a real page and badge.
    const statusSlug = randomBytes(16).toString('base64url').slice(0, 22);
    const badgeSlug = randomBytes(16).toString('base64url').slice(0, 22);
    await cp.db.sql`insert into status_pages (project_id, slug, title) values (${project_id}, ${statusSlug}, 'Status')`;
    await cp.db.sql`insert into badges (slug, monitor_id) values (${badgeSlug}, ${monitor})`;
    const hb = (await api('POST', '/heartbeats', { project_id, name: 'h' })).body.data;
    real.heartbeat = [hb.id];
    real.app = [await openTestAlert(cp.db.sql, project_id, hb)];
    real.notify = [
      (await api('POST', '/triggers', { project_id, name: 'open', default_message: 'x' })).body.data.id,
      (await api('POST', '/triggers', { project_id, name: 'locked', default_message: 'x', token_protected: true })).body.data.id,
    ];
    real.status = [statusSlug];
    real.badge = [`${badgeSlug}.svg`, badgeSlug];
    real.component = [monitor];
    real.assets = ['app.css', 'app.js', 'favicon.svg'];
    routes = routesOf(app.routeTable, 'public').filter((r) => r.method !== 'HEAD');
  });
  after(() => cp.stop());

  const answersOf = (url: string) => publicRoutes[url]!.answers;
  const idsFor = (url: string) => real[url.split('/')[1] === 'api' ? 'notify' : url.split('/')[1]!] ?? [];
  // The first parameter is the id (a real one or not), a component a real monitor, the last the suffix.
  // The route's own wildcard first: an id that is itself `*` must not be taken for it.
  const pathOf = (url: string, id: string, suffix: string) => {
    let n = 0;
    return url
      .replace('*', suffix)
      .replace(':id', id)
      .replace(':suffix', suffix)
      .replace(/:[a-z]+/g, (name) => (n++ === 0 ? id : name === ':component' ? real.component![0]! : suffix));
  };
  const suffixArb = fc.oneof(
    fc.constantFrom('start', 'fail', 'log', 'index.css', '..', '', 'status.svg', 'uptime.json', 'response.svg'),
    fc.string({ minLength: 1 }).map(encodeURIComponent),
  );

  it('has a kind of answer for every public route', () => {
    assert.deepEqual(
      routes.filter((r) => !publicRoutes[r.url]),
      [],
    );
    assert.ok(routes.length >= 25, `found ${routes.length} routes`);
  });

  it('survives bad bodies on every route', async () => {
    for (const r of routes) {
      await fc.assert(
        fc.asyncProperty(
          idArb(...idsFor(r.url)),
          suffixArb,
          fc.oneof(
            junkJson.map((v) => ({ body: JSON.stringify(v) ?? 'null', type: 'application/json' })),
            formBody(formFields).map((body) => ({ body, type: 'application/x-www-form-urlencoded' })),
            fc.tuple(fc.string(), contentTypes).map(([body, type]) => ({ body, type })),
          ),
          async (id, suffix, { body, type }) => {
            await expectSane(
              app,
              { method: r.method as 'POST', url: pathOf(r.url, id, suffix), payload: body, headers: { 'content-type': type } },
              answersOf(r.url),
              `${r.method} ${r.url} ${type} ${body.slice(0, 80)}`,
            );
          },
        ),
        {
          numRuns: RUNS,
          examples: [
            // Deep bodies first: fast-check runs at most numRuns examples.
            ...deepJsonTexts.map((body) => ({ body, type: 'application/json' })),
            { body: deepFormBody, type: 'application/x-www-form-urlencoded' },
            ...sharpFields(formFields).map((f) => ({ body: new URLSearchParams(f).toString(), type: 'application/x-www-form-urlencoded' })),
            ...sharpJson.map((v) => ({ body: JSON.stringify(v), type: 'application/json' })),
          ].map((b) => [idsFor(r.url)[0] ?? 'x', '', b] as [string, string, { body: string; type: string }]),
        },
      );
    }
  });

  it('survives bad query strings on every route', async () => {
    for (const r of routes) {
      await fc.assert(
        fc.asyncProperty(
          idArb(...idsFor(r.url)),
          suffixArb,
          fc.dictionary(fc.oneof(fc.constantFrom(...queryFields), fc.string()), junkValue, { maxKeys: 4 }),
          async (id, suffix, query) => {
            const qs = new URLSearchParams(query as Record<string, string>).toString();
            await expectSane(
              app,
              { method: r.method as 'GET', url: `${pathOf(r.url, id, suffix)}?${qs}` },
              answersOf(r.url),
              `${r.method} ${r.url}?${qs.slice(0, 80)}`,
            );
          },
        ),
        {
          numRuns: RUNS,
          examples: sharpFields(queryFields).map((q) => [idsFor(r.url)[0] ?? 'x', '', q] as [string, string, Record<string, string>]),
        },
      );
    }
  });

  it('survives bad headers on every route', async () => {
    for (const r of routes) {
      await fc.assert(
        fc.asyncProperty(
          idArb(...idsFor(r.url)),
          fc.record({
            authorization: fc.oneof(
              headerValue,
              headerValue.map((v) => `Bearer ${v}`),
              fc.constant(ada.auth),
            ),
            'content-type': contentTypes,
            cookie: fc.oneof(
              headerValue,
              headerValue.map((v) => `uptime_session=${v}; uptime_csrf=${v}`),
            ),
            accept: headerValue,
            origin: headerValue,
            'user-agent': headerValue,
            'if-none-match': headerValue,
            'x-request-id': headerValue,
          }),
          fc.string(),
          async (id, headers, payload) => {
            await expectSane(
              app,
              { method: r.method as 'POST', url: pathOf(r.url, id, 'start'), payload: r.method === 'GET' ? undefined : payload, headers },
              answersOf(r.url),
              `${r.method} ${r.url} ${JSON.stringify(headers).slice(0, 120)}`,
            );
          },
        ),
        { numRuns: RUNS },
      );
    }
  });
});
