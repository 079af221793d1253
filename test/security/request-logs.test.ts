import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { startOpsServer, type OpsServer } from '../../control-plane/src/runtime/ops.ts';
import { startControlPlane, type RunningControlPlane } from '../../control-plane/src/runtime/control-plane.ts';
import { startAgent, type RunningAgent } from '../../probe-agent/src/agent.ts';
import { createMetrics } from '../../shared/src/metrics.ts';
import { apiClient } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { captureLog } from '../harness/log.ts';

/** One request with the path sent byte for byte as written (fetch would normalise some of these). */
function send(base: string, path: string, method = 'GET'): Promise<number> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end();
  });
}

const tokenShape = /upt[mt]?_[A-Za-z0-9_-]{43}/;

/** The text with every percent-encoded run decoded (a run that is not UTF-8 is left as it is). */
const percentDecoded = (text: string) =>
  text.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });

/**
 * A secret a client puts in a URL (a trigger's token, mistyped addresses, other parameter
 * spellings, routes that do not exist) is cut from the request lines of every server: the control
 * plane, its ops server, a probe agent and its ping edge. The secrets are registered, so the search
 * after the run looks for them in these lines as well.
 */
describe('secrets in request URLs never reach a log', () => {
  let cp: TestControlPlane;
  let logged: ReturnType<typeof captureLog>;
  let app: RunningControlPlane;
  let ops: OpsServer;
  let agent: RunningAgent;
  let ada: TestAccount;
  let id: string;
  let token: string;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    logged = captureLog();
    app = await startControlPlane({ config: cp.config, log: logged.log, sql: cp.db.sql, nc: cp.nats.nc, roles: ['api'], port: 0 });
    ops = await startOpsServer({ sql: cp.db.sql, nc: cp.nats.nc, metrics: createMetrics(), log: logged.log, port: 0, host: '127.0.0.1' });
    agent = await startAgent({
      config: cp.config,
      nc: cp.nats.nc,
      log: logged.log,
      region: 'local',
      port: 0,
      pingPort: 0,
      checkKey: cp.cp.keys.checkCredentials,
    });
    ada = await createAccount(cp.db.sql);
    // The create answer carries the token: the API client registers it as a secret.
    const created = (
      await apiClient(cp.url, ada.token)('POST', '/triggers', {
        project_id: ada.project_id,
        name: 'Deploys',
        default_message: 'Deployed',
        token_protected: true,
      })
    ).body.data;
    id = created.id;
    token = created.token;
  });
  after(async () => {
    await agent.stop();
    await ops.close();
    await app.stop();
    await cp.stop();
  });

  const assertNotLogged = (secret: string) => {
    const text = logged.text();
    assert.ok(!text.includes(secret), 'the secret is in the log');
    assert.ok(!percentDecoded(text).includes(secret), 'the secret is in the log, percent-encoded');
    assert.doesNotMatch(text, tokenShape);
  };
  /** The request was logged, through the serializer, with its secret cut. */
  const assertLoggedRedacted = (path: string) => {
    const urls = logged
      .text()
      .split('\n')
      .filter(Boolean)
      .flatMap((l) => (JSON.parse(l) as { req?: { url: string } }).req?.url ?? []);
    const before = path.slice(0, path.search(/[?;]|\/upt/));
    assert.ok(
      urls.some((u) => u.startsWith(before) && u.includes('[redacted]')),
      `no redacted request line for ${path}`,
    );
  };

  it('cuts the token of a notify URL however the parameter is spelled, on the route and on every mistyped address', async () => {
    const encoded = token.replace(/[a-z]/g, (c) => `%${c.charCodeAt(0).toString(16)}`);
    const calls: [string, string, number][] = [
      ['GET', `/api/notify/${id}?token=${token}`, 202],
      ['GET', `/api/notify/${id}?%74oken=${token}`, 202],
      ['GET', `/api/notify/${id}?tok%65n=${token}&message=hi`, 202],
      ['POST', `/api/notify/${id}?message=hi&token=${encoded}`, 202],
      ['GET', `/api/notify/${id}?%2574oken=${token}`, 401],
      ['GET', `/api/notify/${id}?TOKEN=${token}`, 401],
      ['GET', `/api/notify/${id}?Token=${token}`, 401],
      ['GET', `/api/notify/${id}?x=1;token=${token}`, 401],
      ['GET', `/api/notify/${id}?token[]=${token}`, 401],
      ['GET', `/api/notify/${id};token=${token}`, 404],
      ['GET', `/api/notify/${id}/?token=${token}`, 404],
      ['GET', `//api/notify/${id}?token=${token}`, 404],
      ['GET', `/API/NOTIFY/${id.toUpperCase()}?token=${token}`, 404],
      ['GET', `/api/notify/${id}/${token}`, 404],
      ['PUT', `/api/notify/${id}?token=${token}`, 405],
      ['GET', `/no/such/route?token=${token}`, 404],
      ['GET', `/heartbeat/${randomUUID()}?token=${token}`, 404],
      ['GET', `/projects?access_token=${token}`, 401],
      ['GET', `/app/sign-in?token=${token}`, 200],
    ];
    for (const [method, path, status] of calls) assert.equal(await send(app.url!, path, method), status, `${method} ${path}`);
    assertNotLogged(token);
    // Ping URLs log warnings only: their requests leave no line at all.
    for (const [, path] of calls) if (!path.startsWith('/heartbeat/')) assertLoggedRedacted(path);
  });

  it('cuts secrets from the request lines of the ops server, the probe agent and its ping edge, 404s included', async () => {
    const calls: [string, string][] = [
      [ops.url, `/no/such/route?token=${token}`],
      [ops.url, `/metrics?x=1;TOKEN=${token}`],
      [agent.url, `/nope?%74oken=${token}`],
      [agent.url, `/healthz/?token=${token}`],
      [agent.pingUrl!, `/heartbeat/${randomUUID()}?token=${token}`],
      [agent.pingUrl!, `//heartbeat/${randomUUID()}?token=${token}`],
      [agent.pingUrl!, `/HEARTBEAT/${randomUUID()}/?password=${token}`],
    ];
    for (const [base, path] of calls) assert.ok((await send(base, path)) < 500, path);
    assertNotLogged(token);
    for (const [, path] of calls) if (!path.startsWith('/heartbeat/')) assertLoggedRedacted(path);
  });

  it("keeps a signed-in user's password out of the log when it is sent in a query by mistake", async () => {
    const password = encodeURIComponent(ada.password);
    assert.equal(await send(app.url!, `/app/sign-in?email=${encodeURIComponent(ada.email)}&password=${password}`), 200);
    assert.equal(await send(app.url!, `/nope?x;Password=${password}`), 404);
    assertNotLogged(ada.password);
  });
});
