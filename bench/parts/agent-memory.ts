/**
 * Part 6, agent memory: heap a running probe agent holds per assigned monitor, against the floor
 * of keeping the parsed assignments in a Map.
 */
import { ensureStreams } from '../../shared/src/provision.ts';
import { runScript, startScript } from '../lib/child.ts';
import { benchNats, natsServer } from '../lib/infra.ts';
import { runPart } from '../lib/part.ts';
import { publishWindowed } from '../lib/publish.ts';
import { round, sig } from '../lib/stats.ts';
import type { TargetReady } from '../lib/target-server.ts';
import type { HostArgs, Memory } from './agent-memory-host.ts';
import { assignmentJson, monitorIdOf } from './agent-memory-data.ts';

const goalBytes = 2_048;
type Weighed = { before: Memory; after: Memory; checks?: number };

await runPart('agent-memory', 'Agent memory', async (ctx) => {
  const monitors = ctx.quick ? 10_000 : 100_000;
  const region = 'bench';
  const natsUrl = await natsServer(ctx);
  const { nc, names, namespace } = await benchNats(ctx, natsUrl);
  await ensureStreams(nc, names, { replicas: 1 });
  const target = await startScript<TargetReady>('lib/target-server.ts', [JSON.stringify({ delayMs: 0 })], {
    timeoutMs: 20_000,
    label: 'target',
  });
  ctx.cleanup(() => target.stop());
  const args: HostArgs = { mode: 'agent', natsUrl, namespace, region, monitors, targetUrl: target.ready.keepAlive };
  const jsonBytes = Buffer.byteLength(assignmentJson(monitors - 1, region, args.targetUrl));
  ctx.method.push(
    `A probe agent (\`startAgent\`, alone in its region, so it owns every monitor) in a process of its own, started with no assignment; then ${monitors.toLocaleString('en')} assignments (${jsonBytes} bytes of JSON each, a unique URL per monitor, interval 1 h so few checks run meanwhile) are written into KV \`assignments\`.`,
    'Bytes per monitor = heap used once it holds them all − heap used before, after forced full collections (--expose-gc), / monitors.',
    "Floor: the same assignments parsed (zod `Assignment`) into a Map keyed like the agent's, in a process of its own: what any agent must hold.",
  );

  const floor = await runScript<Weighed>('parts/agent-memory-host.ts', [JSON.stringify({ ...args, mode: 'floor' })], {
    timeoutMs: 120_000,
    nodeFlags: ['--expose-gc'],
    label: 'floor',
  });
  const host = await startScript<{ ready: true }>('parts/agent-memory-host.ts', [JSON.stringify(args)], {
    timeoutMs: 60_000,
    nodeFlags: ['--expose-gc'],
    label: 'agent',
  });
  ctx.cleanup(() => host.stop());
  const bucketSubject = (i: number) => `$KV.${names.buckets.assignments}.${names.keys.assignment(region, monitorIdOf(i))}`;
  const written = await publishWindowed(
    nc,
    monitors,
    (i) => ({ subject: bucketSubject(i), payload: assignmentJson(i, region, args.targetUrl) }),
    512,
  );
  if (written.failed > 0) throw new Error(`${written.failed} assignments could not be written`);
  ctx.log(`wrote ${written.acked} assignments in ${Math.round(written.wallMs)} ms`);
  const agent = await host.request<Weighed>({ expect: monitors, timeoutMs: 120_000 });
  if (agent.after.owned < monitors)
    ctx.notes.push(`The agent held ${agent.after.assigned} assignments and scheduled ${agent.after.owned} of ${monitors} within 120 s.`);

  const per = (w: Weighed, k: 'heapUsed' | 'rss') => (w.after[k] - w.before[k]) / Math.max(1, w.after.owned);
  const heap = per(agent, 'heapUsed');
  const floorHeap = per(floor, 'heapUsed');
  ctx.log(`agent ${Math.round(heap)} B/monitor, floor ${Math.round(floorHeap)} B/monitor`);
  ctx.figures.push(
    {
      metric: `Heap per assigned monitor (${monitors.toLocaleString('en')} monitors)`,
      value: Math.round(heap),
      unit: 'bytes',
      baseline: { label: 'Map of parsed assignments', value: Math.round(floorHeap) },
      ratio: sig(heap / floorHeap),
    },
    {
      metric: 'Resident memory (RSS) per assigned monitor',
      value: Math.round(per(agent, 'rss')),
      unit: 'bytes',
      baseline: { label: 'Map of parsed assignments', value: Math.round(per(floor, 'rss')) },
      ratio: sig(per(agent, 'rss') / per(floor, 'rss')),
    },
    { metric: 'Heap of the agent with no monitor', value: round(agent.before.heapUsed / 2 ** 20, 1), unit: 'MiB' },
    { metric: 'Assignment value in KV', value: jsonBytes, unit: 'bytes' },
  );
  if (agent.checks !== undefined)
    ctx.notes.push(`${agent.checks} checks ran while the assignments arrived (their in-flight state is part of the heap measured).`);
  const met = heap <= goalBytes;
  ctx.goals.push({
    goal: `At most ${goalBytes.toLocaleString('en')} bytes per assigned monitor`,
    actual: `${Math.round(heap).toLocaleString('en')} bytes`,
    met,
    ...(met ? {} : { shortfall: `${Math.round(heap - goalBytes)} bytes over (${round(heap / goalBytes)}x)` }),
  });
});
