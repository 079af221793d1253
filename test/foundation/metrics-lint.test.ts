import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { freePort, freePorts } from '../../control-plane/src/platform/embedded/ports.ts';
import { apiClient } from '../harness/api.ts';
import { startCli } from '../harness/cli.ts';
import { createTestDatabase, type TestDatabase } from '../harness/db.ts';
import { createAccount } from '../harness/factories.ts';
import { startTarget, type Target } from '../harness/http.ts';
import { createTestNats, type TestNats } from '../harness/nats.ts';
import { checkMetrics, requirePromtool } from '../harness/promtool.ts';
import { registerSecret } from '../harness/secrets.ts';
import { eventually } from '../harness/streams.ts';

/** The type a scrape declares for a metric family, or undefined when it is absent. */
function typeOf(text: string, family: string): string | undefined {
  return new RegExp(`^# TYPE ${family} (\\w+)$`, 'm').exec(text)?.[1];
}

function sum(text: string, family: string): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${family} `) || line.startsWith(`${family}{`)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/**
 * Every kind of process the product runs, started as an operator starts it (`uptime ...`), in one
 * deployment, doing real work; each one's /metrics must pass Prometheus's own linter.
 */
describe('/metrics of every process kind, as Prometheus sees it', () => {
  let db: TestDatabase;
  let nats: TestNats;
  let target: Target;
  const children: { child: ChildProcess; exited: Promise<number | null> }[] = [];
  const urls = { embedded: '', embeddedAgent: '', rolesOnly: '', agent: '' };
  let api: ReturnType<typeof apiClient>;
  const scrape = async (url: string) => {
    const res = await fetch(`${url}/metrics`);
    assert.equal(res.status, 200);
    return res.text();
  };

  before(async () => {
    requirePromtool();
    db = await createTestDatabase();
    nats = await createTestNats();
    target = await startTarget({ status: 200, body: 'ok' });
    const secretKey = randomBytes(32).toString('base64url');
    registerSecret(secretKey);
    const common = {
      DATABASE_URL: db.url,
      NATS_URL: nats.url,
      NATS_NAMESPACE: nats.namespace,
      SECRET_KEY: secretKey,
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
    };
    const start = async (args: string[], env: Record<string, string>, ready: RegExp) => {
      const running = await startCli(args, { ...common, ...env }, ready, 60_000);
      children.push(running);
    };

    const [port, agentPort, pingPort] = await freePorts(3);
    await start(
      ['start'],
      { PORT: String(port), AGENT_PORT: String(agentPort), PING_PORT: String(pingPort), REGION: 'local' },
      /uptime is running/,
    );
    urls.embedded = `http://127.0.0.1:${port}`;
    urls.embeddedAgent = `http://127.0.0.1:${agentPort}`;

    const metricsPort = await freePort();
    await start(
      ['control-plane', '--roles', 'ingest,deadline,notify,assign'],
      { PORT: String(await freePort()), METRICS_PORT: String(metricsPort) },
      /"control plane started"/,
    );
    urls.rolesOnly = `http://127.0.0.1:${metricsPort}`;

    const [agent2Port, ping2Port] = await freePorts(2);
    await start(
      ['probe-agent', '--region', 'eu'],
      { AGENT_PORT: String(agent2Port), PING_PORT: String(ping2Port) },
      /"probe agent started"/,
    );
    urls.agent = `http://127.0.0.1:${agent2Port}`;

    const ada = await createAccount(db.sql);
    api = apiClient(urls.embedded, ada.token);
    const created = await api('POST', '/monitors', {
      name: 'Scraped',
      url: target.url,
      project_id: ada.project_id,
      interval: 5,
      timeout: 2,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    // Both regions check it and results are stored, so every family has samples to lint.
    await eventually(async () => sum(await scrape(urls.embeddedAgent), 'uptime_checks_total') > 0, 'the embedded agent checking', 30_000);
    await eventually(async () => sum(await scrape(urls.agent), 'uptime_checks_total') > 0, 'the eu agent checking', 30_000);
    await eventually(
      async () => (await db.sql`select count(distinct region)::int as n from check_results`)[0]!.n === 2,
      'results of both regions stored',
      30_000,
    );
  });

  after(async () => {
    for (const c of children.reverse()) {
      c.child.kill('SIGTERM');
      await c.exited;
    }
    await target?.close();
    await nats?.close();
    await db?.drop();
  });

  for (const kind of ['embedded', 'rolesOnly', 'agent'] as const) {
    const what = {
      embedded: 'uptime start (every role and an agent)',
      rolesOnly: 'uptime control-plane --roles without api (METRICS_PORT)',
      agent: 'uptime probe-agent',
    }[kind];
    it(`passes promtool check metrics: ${what}`, async () => {
      const result = await checkMetrics(await scrape(urls[kind]));
      assert.equal(result.output.trim(), '', result.output);
      assert.equal(result.code, 0);
    });
  }

  it('exposes the since-start totals as counters, not gauges', async () => {
    const embedded = await scrape(urls.embedded);
    const rolesOnly = await scrape(urls.rolesOnly);
    const agent = await scrape(urls.agent);
    assert.equal(typeOf(embedded, 'uptime_ingest_results_stored_total'), 'counter');
    assert.equal(typeOf(rolesOnly, 'uptime_ingest_results_stored_total'), 'counter');
    for (const family of [
      'uptime_agent_results_published_total',
      'uptime_agent_results_dropped_total',
      'uptime_agent_publish_failures_total',
    ]) {
      assert.equal(typeOf(agent, family), 'counter', family);
      assert.equal(typeOf(embedded, family), 'counter', `${family} of the embedded agent`);
    }
    assert.ok(sum(agent, 'uptime_agent_results_published_total') > 0);
  });

  it('exposes every metric the suggested alert rules read, so no rule waits on a name that is gone', async () => {
    const exposed = new Set<string>();
    for (const url of Object.values(urls)) {
      for (const m of (await scrape(url)).matchAll(/^# TYPE (\S+) (\w+)$/gm)) {
        exposed.add(m[1]!);
        if (m[2] === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) exposed.add(m[1]! + suffix);
      }
    }
    const rules = readFileSync(new URL('../../deploy/prometheus/alerts.yml', import.meta.url), 'utf8');
    const read = new Set([...rules.matchAll(/\b(uptime_[a-z_]+)\b/g)].map((m) => m[1]!));
    assert.ok(read.size > 5, 'the rules read uptime metrics');
    assert.deepEqual(
      [...read].filter((name) => !exposed.has(name)),
      [],
    );
  });
});
