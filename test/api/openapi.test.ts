import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import Fastify from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { serializerCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { finishDocument, type OpenApiDocument } from '../../control-plane/src/platform/http/openapi-document.ts';
import { registerOpenApi } from '../../control-plane/src/platform/http/openapi.ts';
import { operationIds } from '../../control-plane/src/platform/http/operations.ts';
import { validatorCompiler } from '../../control-plane/src/platform/http/validation.ts';
import { apiClient } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount } from '../harness/factories.ts';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { license: string };

/** What a client generator relies on, checked by Redocly's validator: each rule an error. */
const rules = [
  'struct',
  'no-unresolved-refs',
  'operation-operationId',
  'operation-operationId-unique',
  'operation-operationId-url-safe',
  'path-parameters-defined',
  'path-declaration-must-exist',
  'operation-parameters-unique',
  'no-identical-paths',
  'no-ambiguous-paths',
  'no-unused-components',
  'operation-tag-defined',
  'operation-singular-tag',
  'tag-description',
  'security-defined',
  'operation-2xx-response',
  'info-contact',
  'info-license',
  'info-license-strict',
  'no-enum-type-mismatch',
  'no-required-schema-properties-undefined',
];

type Operation = {
  operationId?: string;
  tags?: string[];
  description?: string;
  requestBody?: { description?: string };
  responses: Record<string, { description: string }>;
};
type Doc = {
  openapi: string;
  info: { license?: { name: string; identifier?: string }; contact?: { url?: string }; description: string };
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
};

const operationsOf = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })),
  );

describe('the OpenAPI document', () => {
  let cp: TestControlPlane;
  let doc: Doc;
  let text: string;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    text = await (await fetch(`${cp.url}/openapi.json`)).text();
    doc = JSON.parse(text) as Doc;
  });
  after(() => cp.stop());

  it('is valid OpenAPI 3.1: no dangling $ref, every path parameter declared, unique operation ids, no unused component', async () => {
    assert.equal(doc.openapi, '3.1.0');
    const config = await createConfig({ rules: Object.fromEntries(rules.map((r) => [r, 'error'])) });
    const problems = await lintFromString({ source: text, absoluteRef: `${cp.url}/openapi.json`, config });
    assert.deepEqual(
      problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`),
      [],
    );
  });

  it('gives every operation the operationId of the central table, camelCase and unique', () => {
    const ops = operationsOf(doc);
    assert.ok(ops.length >= 35, `${ops.length} operations`);
    const ids = ops.map(({ op }) => op.operationId);
    assert.equal(new Set(ids).size, ids.length);
    for (const { key, op } of ops) {
      assert.equal(op.operationId, operationIds[key], key);
      assert.match(op.operationId ?? '', /^[a-z][A-Za-z]+$/, key);
    }
    const byKey = Object.fromEntries(ops.map(({ key, op }) => [key, op.operationId]));
    assert.deepEqual(
      [
        'GET /monitors',
        'POST /monitors',
        'GET /monitors/{id}',
        'PUT /monitors/{id}',
        'DELETE /monitors/{id}',
        'GET /heartbeats',
        'POST /heartbeats',
        'GET /heartbeats/{id}',
        'PATCH /heartbeats/{id}',
        'DELETE /heartbeats/{id}',
      ].map((k) => byKey[k]),
      [
        'listMonitors',
        'createMonitor',
        'getMonitor',
        'updateMonitor',
        'deleteMonitor',
        'listHeartbeats',
        'createHeartbeat',
        'getHeartbeat',
        'updateHeartbeat',
        'deleteHeartbeat',
      ],
    );
  });

  it('tags every operation with one declared, described tag, and declares no tag it does not use', () => {
    const declared = doc.tags.map((t) => t.name);
    const used = new Set(operationsOf(doc).flatMap(({ op }) => op.tags ?? []));
    for (const { key, op } of operationsOf(doc)) assert.equal(op.tags?.length, 1, key);
    assert.deepEqual([...used].sort(), [...declared].sort());
    for (const t of doc.tags) assert.ok(t.description.length > 10, t.name);
  });

  it('keeps only the component schemas the operations use', () => {
    const names = Object.keys(doc.components.schemas);
    assert.ok(names.includes('Monitor') && names.includes('Heartbeat') && names.includes('ProjectSummary'));
    assert.deepEqual(
      names.filter((n) => n.endsWith('Input')),
      [],
    );
  });

  it('states the licence of package.json and a contact', () => {
    assert.deepEqual(doc.info.license, { name: pkg.license, identifier: pkg.license });
    assert.equal(pkg.license, 'MIT');
    assert.equal(doc.info.contact?.url, `${cp.config.PUBLIC_URL.replace(/\/$/, '')}/docs`);
  });

  it('tells a client what a NUL character gets it, on every operation that takes input, as the API does', async () => {
    assert.match(doc.info.description, /NUL character \(U\+0000\)/);
    const withInput = operationsOf(doc).filter(({ op }) => op.requestBody || op.responses['422']);
    assert.ok(withInput.length >= 20);
    for (const { key, op } of withInput) {
      assert.match(op.description ?? '', /NUL character \(U\+0000\).*422/s, key);
      assert.match(op.responses['422']!.description, /NUL/, key);
      if (op.requestBody) assert.match(op.requestBody.description ?? '', /NUL/, key);
    }
    const ada = await createAccount(cp.db.sql);
    const res = await apiClient(cp.url, ada.token)('POST', '/monitors', {
      name: 'a\u0000b',
      url: 'https://example.com',
      project_id: ada.project_id,
    });
    assert.equal(res.status, 422);
    assert.deepEqual(Object.keys(res.body.errors), ['name']);
    assert.match(res.body.errors.name[0], /NUL/);
  });
});

describe('finishing the document', () => {
  const base = (): OpenApiDocument => ({
    paths: {
      '/things': {
        get: {
          tags: ['Things'],
          responses: { 200: { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } } },
        },
        post: {
          tags: ['Things'],
          requestBody: { content: {} },
          responses: { 201: { description: 'ok' }, 422: { description: 'Default Response' } },
        },
      },
    },
    components: {
      schemas: { Thing: { properties: { owner: { $ref: '#/components/schemas/Owner' } } }, Owner: {}, ThingInput: {}, Unused: {} },
    },
  });
  const rules = (ids: Record<string, string>) => ({ operationIds: ids, tags: [{ name: 'Things' }] });
  const both = { 'GET /things': 'listThings', 'POST /things': 'createThing' };

  it('refuses a documented route without an operationId, naming it', () => {
    assert.throws(() => finishDocument(base(), rules({ 'GET /things': 'listThings' })), /POST \/things has no operationId/);
  });

  it('refuses two routes with one operationId', () => {
    assert.throws(
      () => finishDocument(base(), rules({ 'GET /things': 'things', 'POST /things': 'things' })),
      /share the operationId things/,
    );
  });

  it('refuses an entry that names no documented route', () => {
    assert.throws(
      () => finishDocument(base(), rules({ ...both, 'DELETE /things': 'deleteThing' })),
      /DELETE \/things has an operationId but no documented route/,
    );
  });

  it('refuses an operation without a declared tag', () => {
    const doc = base();
    (doc.paths!['/things']!.get as { tags: string[] }).tags = ['Other'];
    assert.throws(() => finishDocument(doc, rules(both)), /GET \/things must carry exactly one declared tag/);
  });

  it('gives each method of a shared operation its own id, and drops unreferenced schemas only', () => {
    const doc = base();
    const shared = { tags: ['Things'], responses: { 202: { description: 'ok' } } };
    doc.paths!['/fire'] = { get: shared, post: shared };
    const done = finishDocument(doc, rules({ ...both, 'GET /fire': 'fireWithGet', 'POST /fire': 'fire' }));
    const fire = done.paths!['/fire'] as Record<string, { operationId: string }>;
    assert.deepEqual([fire.get!.operationId, fire.post!.operationId], ['fireWithGet', 'fire']);
    assert.deepEqual(Object.keys(done.components!.schemas!).sort(), ['Owner', 'Thing']);
  });

  it('writes the NUL rule on operations that take input, and only there', () => {
    const done = finishDocument(base(), rules(both));
    const things = done.paths!['/things'] as Record<string, Operation>;
    assert.match(things.post!.description!, /NUL/);
    assert.match(things.post!.requestBody!.description!, /NUL/);
    assert.match(things.post!.responses['422']!.description, /NUL/);
    assert.equal(things.get!.description, undefined);
  });
});

describe('a route added without an operationId', () => {
  it('stops the application from starting', async () => {
    const app = Fastify().withTypeProvider<ZodTypeProvider>();
    app.setValidatorCompiler(validatorCompiler);
    app.setSerializerCompiler(serializerCompiler);
    await registerOpenApi(app, 'http://127.0.0.1:3000');
    app.get(
      '/widgets',
      { schema: { tags: ['Monitors'], summary: 'List widgets', response: { 200: z.object({ ok: z.boolean() }) } } },
      async () => ({ ok: true }),
    );
    await assert.rejects(async () => app.ready(), /GET \/widgets has no operationId/);
    await app.close().catch(() => undefined);
  });
});
