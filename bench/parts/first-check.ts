/**
 * Part 8, first check: how soon a monitor is checked after it is created, un-paused or pointed at
 * another URL, through the whole pipeline (API, Postgres, the assigner, KV, a probe agent), against
 * when its first slot on the grid came, which is what a monitor waited for before.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { createToken, createUser } from '../../control-plane/src/accounts/service.ts';
import { startControlPlane } from '../../control-plane/src/runtime/control-plane.ts';
import { startAgent } from '../../probe-agent/src/agent.ts';
import { nextSlot, phaseOf } from '../../probe-agent/src/schedule/scheduler.ts';
import { loadConfig } from '../../shared/src/config.ts';
import { benchDatabase, benchLog, benchNats, natsServer, postgresServer } from '../lib/infra.ts';
import { runPart } from '../lib/part.ts';
import { round, sig, summarize } from '../lib/stats.ts';
import { startSite } from './first-check-site.ts';

const goalMs = 2_000;
const intervalS = 60;
/** Long enough for the slot a broken first check would fall back to. */
const waitMs = (intervalS + 5) * 1000;

type Kind = 'creation' | 'un-pause' | 'URL edit';
type Sample = { firstMs: number; gridMs: number };

const until = async (done: () => boolean, what: string, limitMs = 10_000) => {
  const deadline = performance.now() + limitMs;
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`no ${what} within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

await runPart('first-check', 'First check', async (ctx) => {
  const rounds = ctx.quick ? 5 : 30;
  const db = await benchDatabase(ctx, await postgresServer(ctx));
  const natsUrl = await natsServer(ctx);
  const { nc, namespace } = await benchNats(ctx, natsUrl);
  const config = loadConfig({
    DATABASE_URL: db.url,
    NATS_URL: natsUrl,
    NATS_NAMESPACE: namespace,
    SECRET_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'silent',
  });
  const cp = await startControlPlane({ config, log: benchLog, sql: db.sql, nc, roles: ['api', 'assign', 'ingest'], port: 0 });
  ctx.cleanup(() => cp.stop());
  const agent = await startAgent({ config, nc, log: benchLog, region: 'bench', port: 0, checkKey: cp.keys.checkCredentials });
  ctx.cleanup(() => agent.stop());
  const site = await startSite();
  ctx.cleanup(() => site.close());
  const user = await createUser(db.sql, { email: 'first@bench.test', password: 'a long bench password' });
  const token = (await createToken(db.sql, user.user_id, 'bench', 'api')).token;
  const pool = new Pool(cp.url!, { connections: 1 });
  ctx.cleanup(() => pool.close());
  const call = async (method: 'POST' | 'PUT', path: string, body: object) => {
    const res = await pool.request({
      method,
      path,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.body.json()) as { data: { id: string } };
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(json).slice(0, 200)}`);
    return json.data;
  };
  const create = (path: string) =>
    call('POST', '/monitors', { name: path, url: `${site.url}${path}`, project_id: user.project_id, interval: intervalS, timeout: 5 });

  ctx.method.push(
    `The control plane (roles api, assign, ingest) and a probe agent at its real pace (\`startAgent\`, one region, alone in it) in this process, on a NATS namespace and a database of this run; the monitored site is a node:http server in this process.`,
    `${rounds} rounds, one after the other: create a monitor (interval ${intervalS} s); pause it and wait until the agent dropped it, then un-pause it; point it at another URL. Each is timed from sending the API request to the check's request arriving at the site (performance.now() in one process), and the creation also to its result being in Postgres (polled every 10 ms).`,
    "Baseline: when the monitor's first slot on its grid came (phase from the monitor id, the same grid the agent keeps), from the same start: what a new, re-activated or edited monitor waited for before it got a check of its own at once.",
  );

  // Until the assigner has seen the agent, monitors checked from the live regions go nowhere.
  await create('/warm-up');
  await until(() => agent.stats().owned === 1, 'region known to the assigner');

  const samples: Record<Kind, Sample[]> = { creation: [], 'un-pause': [], 'URL edit': [] };
  const stored: number[] = [];
  /** The first request to path after the call, and when the grid would have checked it. */
  const time = async (kind: Kind, path: string, write: () => Promise<{ id: string }>) => {
    const n = site.count(path) + 1;
    const t0 = performance.now();
    const wall0 = Date.now();
    const { id } = await write();
    const at = await site.arrival(path, n, waitMs);
    if (at === undefined) throw new Error(`${kind}: no check of ${path} within ${waitMs / 1000} s`);
    const firstMs = at - t0;
    // The agent learnt of the change just before it checked: its grid slot was the next one.
    const learnt = wall0 + firstMs;
    samples[kind].push({ firstMs, gridMs: nextSlot(learnt, intervalS * 1000, phaseOf(id, intervalS * 1000)) - wall0 });
    return { id, t0 };
  };

  for (let i = 0; i < rounds; i++) {
    const path = `/m/${i}`;
    const { id, t0 } = await time('creation', path, () => create(path));
    for (;;) {
      const [row] = await db.sql`select 1 from check_results where monitor_id = ${id} limit 1`;
      if (row) break;
      if (performance.now() - t0 > waitMs) throw new Error(`no stored result of ${path}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    stored.push(performance.now() - t0);

    const assigned = agent.stats().assigned;
    await call('PUT', `/monitors/${id}`, { active: false });
    await until(() => agent.stats().assigned < assigned, 'unassignment');
    await time('un-pause', path, () => call('PUT', `/monitors/${id}`, { active: true }));
    await time('URL edit', `${path}/edited`, () => call('PUT', `/monitors/${id}`, { url: `${site.url}${path}/edited` }));
  }
  ctx.log(`${rounds} rounds done; agent: ${JSON.stringify(agent.stats().scheduler)}`);

  const kinds = Object.keys(samples) as Kind[];
  const maxima: string[] = [];
  let met = true;
  for (const kind of kinds) {
    const first = summarize(samples[kind].map((s) => s.firstMs));
    const grid = summarize(samples[kind].map((s) => s.gridMs));
    ctx.figures.push(
      {
        metric: `First check after ${kind}, p50`,
        value: round(first.p50, 1),
        unit: 'ms',
        baseline: { label: 'its first slot on the grid', value: Math.round(grid.p50) },
        ratio: sig(first.p50 / grid.p50),
      },
      {
        metric: `First check after ${kind}, max`,
        value: round(first.max, 1),
        unit: 'ms',
        baseline: { label: 'its first slot on the grid', value: Math.round(grid.max) },
        ratio: sig(first.max / grid.max),
      },
    );
    maxima.push(`${Math.round(first.max)} ms (${kind})`);
    if (first.max > goalMs) met = false;
  }
  const s = summarize(stored);
  ctx.figures.push(
    { metric: 'Result in Postgres after creation, p50', value: Math.round(s.p50), unit: 'ms' },
    { metric: 'Result in Postgres after creation, max', value: Math.round(s.max), unit: 'ms' },
  );
  ctx.goals.push({
    goal: `First check within ${goalMs / 1000} s of creation / un-pause / URL edit (the slowest of ${rounds} each)`,
    actual: maxima.join(', '),
    met,
    ...(met ? {} : { shortfall: `the slowest over ${goalMs / 1000} s: ${maxima.join(', ')}` }),
  });
});
