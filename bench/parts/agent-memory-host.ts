/**
 * The process whose heap is weighed: a running probe agent (startAgent) that answers `measure`
 * once it holds the expected number of monitors, or the floor, a Map of the parsed assignments.
 */
import { connect } from '@nats-io/transport-node';
import { startAgent } from '../../probe-agent/src/agent.ts';
import { loadConfig } from '../../shared/src/config.ts';
import { Assignment } from '../../shared/src/contracts/monitoring.ts';
import { answer } from '../lib/child.ts';
import { benchLog } from '../lib/infra.ts';
import { assignmentJson } from './agent-memory-data.ts';

export type HostArgs = { mode: 'agent' | 'floor'; natsUrl: string; namespace: string; region: string; monitors: number; targetUrl: string };
export type Memory = { heapUsed: number; rss: number; assigned: number; owned: number };

const args = JSON.parse(process.argv[2]!) as HostArgs;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const settle = async () => {
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setImmediate(r));
    gc();
  }
};
const memory = (assigned: number, owned: number): Memory => ({
  heapUsed: process.memoryUsage().heapUsed,
  rss: process.memoryUsage().rss,
  assigned,
  owned,
});

if (args.mode === 'floor') {
  await settle();
  const before = memory(0, 0);
  const held = new Map<string, Assignment>();
  for (let i = 0; i < args.monitors; i++) {
    const a = Assignment.parse(JSON.parse(assignmentJson(i, args.region, args.targetUrl)));
    held.set(`${args.region}.${a.monitor_id}`, a);
  }
  await settle();
  await answer({ before, after: memory(held.size, held.size) });
  process.exit(0);
}

const nc = await connect({ servers: args.natsUrl, name: 'bench-agent' });
const config = loadConfig({ NATS_URL: args.natsUrl, NATS_NAMESPACE: args.namespace, LOG_LEVEL: 'silent', REGION: args.region });
const agent = await startAgent({ config, nc, log: benchLog, region: args.region, agentId: 'bench-agent', port: 0 });
await new Promise((r) => setTimeout(r, 1_000));
await settle();
const before = memory(agent.stats().assigned, agent.stats().owned);
process.on('message', (m: { expect: number; timeoutMs: number }) => {
  void (async () => {
    const deadline = Date.now() + m.timeoutMs;
    while ((agent.stats().assigned < m.expect || agent.stats().owned < m.expect) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    await settle();
    const s = agent.stats();
    await answer({ before, after: memory(s.assigned, s.owned), checks: s.checks });
  })();
});
process.once('SIGTERM', () => {
  void agent
    .stop()
    .then(() => nc.close())
    .finally(() => process.exit(0));
});
await answer({ ready: true });
