import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../../control-plane/src/platform/embedded/ports.ts';
import { startAgent, type RunningAgent } from '../../probe-agent/src/agent.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';

/**
 * The ports an operator publishes (the API, a region's ping edge) carry no /metrics once
 * METRICS_PORT is set apart from PORT; the scrape moves to a port that stays inside.
 */
describe('/metrics kept off the public ports', () => {
  let cp: TestControlPlane;
  let agent: RunningAgent;
  let metricsPort: number;

  before(async () => {
    metricsPort = await freePort();
    cp = await startTestControlPlane({ roles: ['api', 'assign'], env: { METRICS_PORT: String(metricsPort) } });
    agent = await startAgent({
      config: cp.config,
      nc: cp.nats.nc,
      log: quietLog,
      region: 'local',
      port: 0,
      pingPort: 0,
      checkKey: cp.cp.keys.checkCredentials,
    });
  });
  after(async () => {
    await agent.stop();
    await cp.stop();
  });

  it('serves /metrics, /healthz and /readyz on METRICS_PORT, and no /metrics on the API port', async () => {
    assert.equal(cp.cp.metricsUrl, `http://127.0.0.1:${metricsPort}`);
    const scrape = await fetch(`${cp.cp.metricsUrl}/metrics`);
    assert.equal(scrape.status, 200);
    assert.match(await scrape.text(), /^uptime_process_cpu_seconds_total /m);
    assert.equal((await fetch(`${cp.cp.metricsUrl}/readyz`)).status, 200);
    assert.equal((await fetch(`${cp.url}/metrics`)).status, 404);
    // Load balancers keep probing the API port.
    assert.equal((await fetch(`${cp.url}/healthz`)).status, 200);
    assert.equal((await fetch(`${cp.url}/readyz`)).status, 200);
  });

  it("counts the API's requests in the scrape on METRICS_PORT", async () => {
    assert.equal((await fetch(`${cp.url}/healthz`)).status, 200);
    const text = await (await fetch(`${cp.cp.metricsUrl}/metrics`)).text();
    assert.match(text, /^uptime_http_requests_total\{server="api",route="\/healthz",method="GET",status="200"\} [1-9]/m);
  });

  it("serves no /metrics on a probe agent's ping edge, only on its AGENT_PORT", async () => {
    assert.ok(agent.pingUrl);
    assert.equal((await fetch(`${agent.pingUrl}/metrics`)).status, 404);
    assert.equal((await fetch(`${agent.pingUrl}/healthz`)).status, 200);
    const scrape = await fetch(`${agent.url}/metrics`);
    assert.equal(scrape.status, 200);
    assert.match(await scrape.text(), /^uptime_agent_monitors_owned /m);
  });
});
