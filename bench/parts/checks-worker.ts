/**
 * One measured loop of checks in a process of its own: our checker or a bare undici loop, in
 * one connection mode. Answers with the CPU time of this process over the measured checks.
 */
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { createChecker, type CheckTarget } from '../../probe-agent/src/check/check.ts';
import { userAgent } from '../../shared/src/version.ts';
import { answer } from '../lib/child.ts';
import { profiled, type ProfileSummary } from '../lib/profile.ts';

export type CheckClient = 'ours' | 'bare';
export type ConnectionMode = 'keep-alive' | 'fresh TCP' | 'fresh TLS';
export type WorkerArgs = {
  client: CheckClient;
  mode: ConnectionMode;
  url: string;
  count: number;
  warmup: number;
  concurrency: number;
  maxMs: number;
  profile?: string;
  sourceMaps?: boolean;
};
export type WorkerAnswer = { checks: number; failures: number; wallMs: number; cpuUs: number; profile?: ProfileSummary };

const args = JSON.parse(process.argv[2]!) as WorkerArgs;
// tsx turns source maps on, as in production; a variant measures what they cost.
if (args.sourceMaps === false) process.setSourceMapsEnabled(false);
const headers = { 'user-agent': userAgent, accept: '*/*' };

function oursClient(): { one: () => Promise<boolean>; close: () => Promise<void> } {
  const checker = createChecker({ userAgent, blockPrivateTargets: false });
  const target: CheckTarget = {
    url: args.url,
    method: 'GET',
    valid_http_codes: [200],
    basic_auth_username: null,
    basic_auth_password: null,
    timeout_ms: 10_000,
    follow_redirects: true,
  };
  return { one: async () => (await checker.run(target)).ok, close: () => checker.close() };
}

/** The floor: undici's request with nothing around it; full TLS handshakes as our checker does. */
function bareClient(): { one: () => Promise<boolean>; close: () => Promise<void> } {
  const agent = new Agent({ keepAliveTimeout: 30_000, connect: { maxCachedSessions: 0 } });
  const reset = args.mode !== 'keep-alive';
  return {
    one: async () => {
      const { statusCode, body } = await request(args.url, { method: 'GET', headers, dispatcher: agent, reset });
      await body.dump();
      return statusCode === 200;
    },
    close: () => agent.close(),
  };
}

const client = args.client === 'ours' ? oursClient() : bareClient();

async function loop(count: number, deadline: number): Promise<{ checks: number; failures: number }> {
  let issued = 0;
  let failures = 0;
  const worker = async () => {
    while (issued < count && performance.now() < deadline) {
      issued++;
      const ok = await client.one().catch(() => false);
      if (!ok) failures++;
    }
  };
  await Promise.all(Array.from({ length: args.concurrency }, worker));
  return { checks: issued, failures };
}

await loop(args.warmup, performance.now() + args.maxMs);
const measure = async () => {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const done = await loop(args.count, t0 + args.maxMs);
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { ...done, wallMs, cpuUs: cpu.user + cpu.system };
};
const out: WorkerAnswer = args.profile
  ? await profiled(args.profile, measure).then(({ result, profile }) => ({ ...result, profile }))
  : await measure();
await client.close();
await answer(out);
process.exit(0);
