import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startAgent, type RunningAgent } from '../../probe-agent/src/agent.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startTarget, type Target } from '../harness/http.ts';
import { eventually } from '../harness/streams.ts';

/**
 * BLOCK_PRIVATE_TARGETS through the running product: monitors created with the API, assigned
 * over NATS and checked by real probe agents, with names resolved by the system resolver
 * (`localhost` comes from /etc/hosts, no seam). Two regions: `strict` blocks every internal
 * address; `exempt` lets 127.0.0.1 through (ALLOWED_PRIVATE_TARGETS), so a target there can
 * redirect a check towards another internal address, which must be refused on that hop.
 */
describe('monitors pointed at internal addresses', () => {
  let cp: TestControlPlane;
  const agents: RunningAgent[] = [];
  let ada: TestAccount;
  let api: Call;
  let inside: Target;
  let open: Target;
  let bouncer: Target;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api', 'assign', 'ingest'] });
    const agent = async (region: string, allowed: string[]) => {
      const config = { ...cp.config, REGION: region, BLOCK_PRIVATE_TARGETS: true, ALLOWED_PRIVATE_TARGETS: allowed };
      agents.push(
        await startAgent({
          config,
          nc: cp.nats.nc,
          log: quietLog,
          region,
          port: 0,
          pingPort: 0,
          timeScale: 0.2,
          checkKey: cp.cp.keys.checkCredentials,
        }),
      );
    };
    await agent('strict', []);
    await agent('exempt', ['127.0.0.1']);
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    inside = await startTarget({ status: 200, body: 'internal admin page' });
    open = await startTarget({ status: 200, body: 'ok' });
    bouncer = await startTarget({ status: 302, headers: { location: `http://127.0.0.2:${new URL(inside.url).port}/admin` } });
  });
  after(async () => {
    for (const a of agents) await a.stop();
    for (const t of [inside, open, bouncer]) await t?.close();
    await cp.stop();
  });

  const create = async (url: string, region: string) => {
    const res = await api('POST', '/monitors', { name: url, url, project_id: ada.project_id, interval: 5, timeout: 2, regions: [region] });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data.id as string;
  };
  const settled = async (id: string, status: number) => {
    await eventually(
      async () => (await api('GET', `/monitors/${id}`)).body.data.status === status,
      `monitor ${id} status ${status}`,
      20_000,
    );
    return (await api('GET', `/monitors/${id}/results?per_page=100`)).body.data as Array<{
      ok: boolean;
      region: string;
      error: { class: string; message: string } | null;
    }>;
  };

  it('refuses loopback, a name resolving to loopback, a mapped IPv6 form and the metadata address, without a request', async () => {
    const port = new URL(inside.url).port;
    const cases: Array<[string, RegExp]> = [
      [`http://127.0.0.1:${port}/direct`, /^Target address 127\.0\.0\.1 is not allowed$/],
      [`http://localhost:${port}/by-name`, /^Target address (127\.0\.0\.1|::1) is not allowed$/],
      [`http://[::ffff:127.0.0.1]:${port}/mapped`, /^Target address ::ffff:(127\.0\.0\.1|7f00:1) is not allowed$/],
      ['http://169.254.169.254/latest/meta-data/', /^Target address 169\.254\.169\.254 is not allowed$/],
      ['http://10.0.0.1/', /^Target address 10\.0\.0\.1 is not allowed$/],
    ];
    const ids = await Promise.all(cases.map(([url]) => create(url, 'strict')));
    for (const [i, id] of ids.entries()) {
      const results = await settled(id, 2);
      assert.ok(results.length > 0);
      for (const r of results) {
        assert.equal(r.ok, false);
        assert.equal(r.region, 'strict');
        assert.equal(r.error?.class, 'other');
        assert.match(r.error!.message, cases[i]![1]);
      }
      const incidents = (await api('GET', `/monitors/${id}/incidents`)).body.data;
      assert.match(incidents[0].cause, /is not allowed/);
    }
    assert.equal(inside.requests.length, 0, 'no check reached the internal server');
  });

  it('checks an address the operator exempts, and refuses a redirect from it to another internal address', async () => {
    const reachable = await create(`${open.url}/health`, 'exempt');
    await settled(reachable, 1);
    assert.ok(open.requests.length > 0, 'the exempt address was checked');

    const redirected = await create(`${bouncer.url}/login`, 'exempt');
    const results = await settled(redirected, 2);
    assert.ok(bouncer.requests.length > 0, 'the first hop was followed to its redirect');
    for (const r of results) assert.deepEqual(r.error, { class: 'other', message: 'Target address 127.0.0.2 is not allowed' });
    assert.equal(inside.requests.length, 0, 'the redirect did not reach the internal server');
  });
});
