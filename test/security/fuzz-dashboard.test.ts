import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import type { App } from '../../control-plane/src/runtime/app.ts';
import { apiClient } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { openSession, type TestSession } from '../harness/sessions.ts';
import {
  contentTypes,
  deepFormBody,
  deepJsonTexts,
  expectSane,
  fill,
  formBody,
  headerValue,
  idArb,
  junkJson,
  junkValue,
  RUNS,
  sharpFields,
  sharpJson,
} from './fuzz-kit.ts';
import { routesOf } from './routes.ts';

/**
 * Every dashboard route behind a session (from the route table), signed in with a valid session
 * and its CSRF token, gets 1,000 generated bad form bodies (POST), 1,000 bad query strings (GET)
 * and 1,000 bad header sets. Whatever comes in: no 5xx, and an error is an HTML page (ADR 0010:
 * dashboard errors are pages, with the API's statuses).
 */
const formFields = [
  '_csrf',
  'name',
  'url',
  '_method',
  'valid_http_codes',
  'interval',
  'timeout',
  'regions',
  'basic_auth_username',
  'basic_auth_password',
  'follow_redirects',
  'clear_password',
  'schedule_kind',
  'cron_schedule',
  'timezone',
  'period',
  'grace_period',
  'next_ping_at',
  'default_message',
  'integration_ids',
  'rate_limit',
  'rate_limit_per',
  'token_protected',
  'type',
  'config.url',
  'config.secret',
  'config.headers',
  'config.recipients',
  'email',
  'project_id',
  'description',
  'starts_at',
  'ends_at',
  'cron',
  'duration_seconds',
  'scope',
  'monitor_ids',
  'heartbeat_ids',
  'active',
];
const queryFields = ['fragment', 'type', 'next', 'page', 'per_page', 'region', 'range', 'project_id', 'expired', 'signed_out', 'tab'];

describe('fuzzing every dashboard route with a live session', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let app: App;
  let session: TestSession;
  let realIds: string[];
  let routes: { method: string; url: string }[];

  /** The real id a route's `:id` names, so that sharp inputs reach the page behind it. */
  const realIdFor = (url: string) => {
    const kinds = ['/monitors/', '/heartbeats/', '/triggers/', '/integrations/', '/maintenance/'];
    const i = kinds.findIndex((k) => url.includes(k));
    return realIds[i === -1 ? kinds.length : i]!;
  };

  /** Signing out ends the session: that route gets a fresh one for every request. */
  const sessionFor = async (url: string) => (url === '/app/sign-out' ? openSession(cp.db.sql, ada.user_id) : session);

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    app = cp.cp.app!;
    session = await openSession(cp.db.sql, ada.user_id);
    const api = apiClient(cp.url, ada.token);
    const project_id = ada.project_id;
    // Refused at once, so a fuzzed "send a test message" costs no timeout.
    const integration = (
      await api('POST', '/integrations', { project_id, name: 'i', type: 'webhook', config: { url: 'http://127.0.0.1:1/hook' } })
    ).body.data.id;
    realIds = [
      (await api('POST', '/monitors', { project_id, name: 'm', url: 'https://m.example' })).body.data.id,
      (await api('POST', '/heartbeats', { project_id, name: 'h' })).body.data.id,
      (await api('POST', '/triggers', { project_id, name: 't', default_message: 'x', integration_ids: [integration] })).body.data.id,
      integration,
      (await api('POST', '/maintenance-windows', { project_id, name: 'w', cron: '0 3 * * 0', duration_seconds: 3600, whole_project: true }))
        .body.data.id,
      ada.user_id,
    ];
    routes = routesOf(app.routeTable, 'session').filter((r) => r.method !== 'HEAD');
  });
  after(() => cp.stop());

  const inject = async (r: { method: string; url: string }, opts: Omit<InjectOptions, 'method'>, what: string) =>
    expectSane(app, { method: r.method as 'POST', ...opts }, 'html', `${r.method} ${r.url} ${what}`);

  it('survives bad query strings on every page', async () => {
    for (const r of routes.filter((r) => r.method === 'GET')) {
      await fc.assert(
        fc.asyncProperty(
          idArb(...realIds),
          fc.dictionary(fc.oneof(fc.constantFrom(...queryFields), fc.string()), junkValue, { maxKeys: 4 }),
          async (id, query) => {
            const qs = new URLSearchParams(query as Record<string, string>).toString();
            await inject(r, { url: `${fill(r.url, id)}?${qs}`, headers: { cookie: session.cookie } }, `?${qs.slice(0, 80)}`);
          },
        ),
        { numRuns: RUNS, examples: sharpFields(queryFields).map((q) => [realIdFor(r.url), q]) },
      );
    }
  });

  it('survives bad headers on every route', async () => {
    for (const r of routes) {
      await fc.assert(
        fc.asyncProperty(
          idArb(...realIds),
          fc.record({
            'content-type': contentTypes,
            'x-csrf-token': fc.oneof(headerValue, fc.constant('')),
            origin: fc.oneof(headerValue, fc.constantFrom('null', 'http://evil.example', 'http://localhost:80')),
            'sec-fetch-site': fc.oneof(headerValue, fc.constantFrom('cross-site', 'same-origin', 'none')),
            referer: headerValue,
            accept: headerValue,
            authorization: headerValue,
            extraCookie: headerValue,
          }),
          fc.string(),
          async (id, { extraCookie, ...headers }, payload) => {
            const s = await sessionFor(r.url);
            await inject(
              r,
              {
                url: fill(r.url, id),
                payload: r.method === 'POST' ? payload : undefined,
                headers: { ...headers, cookie: `${s.cookie}; ${extraCookie}` },
              },
              `headers ${JSON.stringify(headers).slice(0, 120)}`,
            );
          },
        ),
        { numRuns: RUNS },
      );
    }
  });

  // Last: the forms create projects, tokens and members, which every later page would have to list.
  it('survives bad form bodies on every form', async () => {
    for (const r of routes.filter((r) => r.method === 'POST')) {
      await fc.assert(
        fc.asyncProperty(
          idArb(...realIds),
          fc.oneof(
            formBody(formFields).map((body) => ({ body, type: 'application/x-www-form-urlencoded' })),
            junkJson.map((v) => ({ body: JSON.stringify(v) ?? 'null', type: 'application/json' })),
            fc.tuple(fc.string(), contentTypes).map(([body, type]) => ({ body, type })),
          ),
          fc.boolean(),
          async (id, { body, type }, withCsrf) => {
            const s = await sessionFor(r.url);
            // Mostly with the session's token, so the input reaches the form's own handling.
            const payload = withCsrf && type === 'application/x-www-form-urlencoded' ? `_csrf=${encodeURIComponent(s.csrf)}&${body}` : body;
            await inject(
              r,
              {
                url: fill(r.url, id),
                payload,
                headers: { cookie: s.cookie, 'content-type': type, 'x-csrf-token': withCsrf ? s.csrf : '' },
              },
              `body ${payload.slice(0, 80)}`,
            );
          },
        ),
        {
          numRuns: RUNS,
          examples: [
            // Deep bodies first: fast-check runs at most numRuns examples.
            ...deepJsonTexts.map((body) => ({ body, type: 'application/json' })),
            { body: deepFormBody, type: 'application/x-www-form-urlencoded' },
            ...sharpFields(formFields)
              .filter((f) => Object.values(f).some((v) => v === '__proto__' || v === 'constructor' || v === 'x'))
              .map((f) => ({ body: new URLSearchParams(f).toString(), type: 'application/x-www-form-urlencoded' })),
            ...sharpJson.map((v) => ({ body: JSON.stringify(v), type: 'application/json' })),
          ].map((b) => [realIdFor(r.url), b, true] as [string, { body: string; type: string }, boolean]),
        },
      );
    }
  });
});
