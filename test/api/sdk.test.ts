import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A small program written the way an outside developer would, against the types generated from
 * the served document (`./schema.ts`) and openapi-fetch: it creates, reads, lists, updates and
 * deletes a monitor and a heartbeat, and reports what it saw.
 */
const clientProgram = `
import createClient from 'openapi-fetch';
import type { components, operations, paths } from './schema.ts';

type Monitor = components['schemas']['Monitor'];
type Heartbeat = components['schemas']['Heartbeat'];
type NewMonitor = operations['createMonitor']['requestBody']['content']['application/json'];

function expect<T>(r: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (r.data === undefined) throw new Error(\`\${what}: \${r.response.status} \${JSON.stringify(r.error)}\`);
  return r.data;
}

export async function run(baseUrl: string, token: string, projectId: string) {
  const api = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${token}\` } });

  const input: NewMonitor = { name: 'Checkout', url: 'https://shop.example/health', project_id: projectId, valid_http_codes: [200, 204], _method: 'HEAD' };
  const created = expect(await api.POST('/monitors', { body: input }), 'createMonitor');
  const monitor: Monitor = created.data;
  const read = expect(await api.GET('/monitors/{id}', { params: { path: { id: monitor.id } } }), 'getMonitor');
  const listed = expect(await api.GET('/monitors', { params: { query: { project_id: projectId, page: 1 } } }), 'listMonitors');
  const updated = expect(await api.PUT('/monitors/{id}', { params: { path: { id: monitor.id } }, body: { name: 'Checkout (EU)', active: false } }), 'updateMonitor');
  const deletedMonitor = await api.DELETE('/monitors/{id}', { params: { path: { id: monitor.id } } });
  const goneMonitor = await api.GET('/monitors/{id}', { params: { path: { id: monitor.id } } });

  const hb = expect(await api.POST('/heartbeats', { body: { name: 'Nightly backup', project_id: projectId, grace_period: 300, cron_schedule: '0 3 * * *' } }), 'createHeartbeat');
  const heartbeat: Heartbeat = hb.data;
  const hbRead = expect(await api.GET('/heartbeats/{id}', { params: { path: { id: heartbeat.id } } }), 'getHeartbeat');
  const hbListed = expect(await api.GET('/heartbeats', { params: { query: { project_id: projectId } } }), 'listHeartbeats');
  const hbUpdated = expect(await api.PATCH('/heartbeats/{id}', { params: { path: { id: heartbeat.id } }, body: { grace_period: 600, next_ping_at: null } }), 'updateHeartbeat');
  const deletedHeartbeat = await api.DELETE('/heartbeats/{id}', { params: { path: { id: heartbeat.id } } });
  const goneHeartbeat = await api.GET('/heartbeats/{id}', { params: { path: { id: heartbeat.id } } });

  return {
    monitor: {
      created: { message: created.message, name: monitor.name, method: monitor.method, codes: monitor.valid_http_codes, project: monitor.project.id },
      read: { id: read.data.id, name: read.data.name },
      listed: { ids: listed.data.map((m) => m.id), total: listed.meta.total, page: listed.meta.current_page },
      updated: { message: updated.message, name: updated.data.name, active: updated.data.active, url: updated.data.url },
      deleted: deletedMonitor.response.status,
      gone: { status: goneMonitor.response.status, error: goneMonitor.error },
    },
    heartbeat: {
      created: { message: hb.message, name: heartbeat.name, grace: heartbeat.grace_period, cron: heartbeat.cron_schedule, ping: heartbeat.ping_url },
      read: { id: hbRead.data.id, fail: hbRead.data.fail_url },
      listed: { ids: hbListed.data.map((h) => h.id), total: hbListed.meta.total },
      updated: { message: hbUpdated.message, grace: hbUpdated.data.grace_period, next: hbUpdated.data.next_ping_at },
      deleted: deletedHeartbeat.response.status,
      gone: { status: goneHeartbeat.response.status, error: goneHeartbeat.error },
    },
  };
}
`;

/** A program that misuses the generated client: it must not compile, or the types check nothing. */
const misuse = `
import createClient from 'openapi-fetch';
import type { paths } from './schema.ts';
const api = createClient<paths>({ baseUrl: 'http://127.0.0.1' });
export async function misuse() {
  await api.POST('/monitors', { body: { name: 42, url: 'https://x.example', project_id: 'p' } });
  await api.PATCH('/monitors/{id}', { params: { path: { id: 'x' } }, body: {} });
  await api.GET('/heartbeats/{id}', { params: { path: {} } });
}
`;
const misusedLines = [6, 7, 8];

/** Type-checks one file with the project's compiler and settings: its problems, by line. */
function typeCheck(file: string): { line: number; message: string }[] {
  const configFile = ts.readConfigFile(join(root, 'tsconfig.json'), (p) => ts.sys.readFile(p));
  const { options } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
  const program = ts.createProgram([file], { ...options, noEmit: true });
  return ts.getPreEmitDiagnostics(program).map((d) => ({
    line: d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0,
    message: `${d.file?.fileName.split('/').pop() ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
  }));
}

describe('a client generated from /openapi.json', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let dir: string;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    dir = mkdtempSync(join(tmpdir(), 'uptime-sdk-'));
    // The generated client resolves openapi-fetch and @types/node as an outside project would: from its node_modules.
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await cp.stop();
  });

  it('generates types with openapi-typescript, type-checks a program against them and runs it against the API', async () => {
    const doc = (await (await fetch(`${cp.url}/openapi.json`)).json()) as OpenAPI3;
    const schema = astToString(await openapiTS(doc));
    for (const op of [
      'listMonitors',
      'createMonitor',
      'getMonitor',
      'updateMonitor',
      'deleteMonitor',
      'listHeartbeats',
      'createHeartbeat',
      'updateHeartbeat',
    ]) {
      assert.match(schema, new RegExp(`\\b${op}: \\{`), `the SDK has ${op}`);
    }
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    writeFileSync(join(dir, 'schema.ts'), schema);
    writeFileSync(join(dir, 'client.ts'), clientProgram);
    writeFileSync(join(dir, 'misuse.ts'), misuse);

    assert.deepEqual(
      typeCheck(join(dir, 'client.ts')).map((d) => d.message),
      [],
    );
    const refused = typeCheck(join(dir, 'misuse.ts'));
    assert.deepEqual([...new Set(refused.map((d) => d.line))], misusedLines, refused.map((d) => d.message).join('\n'));

    const { run } = (await import(pathToFileURL(join(dir, 'client.ts')).href)) as {
      run: (url: string, token: string, project: string) => Promise<any>;
    };
    const seen = await run(cp.url, ada.token, ada.project_id);

    const m = seen.monitor;
    assert.deepEqual(m.created, {
      message: 'Monitor created successfully',
      name: 'Checkout',
      method: 'HEAD',
      codes: [200, 204],
      project: ada.project_id,
    });
    assert.equal(m.read.name, 'Checkout');
    assert.ok(m.listed.ids.includes(m.read.id));
    assert.equal(m.listed.page, 1);
    assert.equal(m.listed.total, m.listed.ids.length);
    assert.deepEqual(m.updated, {
      message: 'Monitor updated successfully',
      name: 'Checkout (EU)',
      active: false,
      url: 'https://shop.example/health',
    });
    assert.equal(m.deleted, 204);
    assert.deepEqual(m.gone, { status: 404, error: { message: 'Not found' } });

    const h = seen.heartbeat;
    assert.equal(h.created.message, 'Heartbeat created successfully');
    assert.deepEqual([h.created.name, h.created.grace, h.created.cron], ['Nightly backup', 300, '0 3 * * *']);
    assert.match(h.created.ping, /\/heartbeat\/[0-9a-f-]{36}$/);
    assert.equal(h.read.fail, `${h.created.ping}/fail`);
    assert.ok(h.listed.ids.includes(h.read.id));
    assert.deepEqual(h.updated, { message: 'Heartbeat updated successfully', grace: 600, next: null });
    assert.equal(h.deleted, 204);
    assert.deepEqual(h.gone, { status: 404, error: { message: 'Not found' } });
  });
});
