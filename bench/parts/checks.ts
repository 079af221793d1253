/**
 * Part 1, check cost: CPU per check and maximum sustained checks/s of our checker against a bare
 * undici loop (the floor) and Prometheus blackbox_exporter, per connection mode.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blackboxHint, findBlackbox, probeLoop, startBlackbox, type ProbeRun } from '../lib/blackbox.ts';
import { selfSignedCert } from '../lib/cert.ts';
import { runScript, startScript } from '../lib/child.ts';
import { runPart } from '../lib/part.ts';
import { extraByCategory } from '../lib/profile.ts';
import { median, round, sig } from '../lib/stats.ts';
import type { TargetReady } from '../lib/target-server.ts';
import type { CheckClient, ConnectionMode, WorkerAnswer, WorkerArgs } from './checks-worker.ts';

const modes: ConnectionMode[] = ['keep-alive', 'fresh TCP', 'fresh TLS'];
const clients: CheckClient[] = ['ours', 'bare'];
const cpuRatioGoal = 1.15;
const blackboxGoal = 1.5;

await runPart('checks', 'Check cost', async (ctx) => {
  const q = ctx.quick;
  // Identical runs differ by 10-20% on a shared machine: five short rounds, medians.
  const rounds = q ? 1 : 5;
  const concurrency = 32;
  const counts: Record<ConnectionMode, number> = q
    ? { 'keep-alive': 5_000, 'fresh TCP': 1_200, 'fresh TLS': 400 }
    : { 'keep-alive': 20_000, 'fresh TCP': 4_000, 'fresh TLS': 1_000 };
  const probes = q ? { 'fresh TCP': 800, 'fresh TLS': 300 } : { 'fresh TCP': 2_000, 'fresh TLS': 700 };
  const maxMs = q ? 6_000 : 8_000;

  const dir = mkdtempSync(join(tmpdir(), 'uptime-bench-checks-'));
  ctx.cleanup(() => rmSync(dir, { recursive: true, force: true }));
  const cert = selfSignedCert(dir);
  const target = await startScript<TargetReady>('lib/target-server.ts', [JSON.stringify({ delayMs: 0, ...cert })], {
    timeoutMs: 20_000,
    label: 'target',
  });
  ctx.cleanup(() => target.stop());
  const urls: Record<ConnectionMode, string> = {
    'keep-alive': target.ready.keepAlive,
    'fresh TCP': target.ready.close,
    'fresh TLS': target.ready.tls!,
  };

  ctx.method.push(
    `Target: node:http / node:https in a separate process on 127.0.0.1, answering 200 "ok"; fresh modes answer \`Connection: close\`, TLS with a self-signed RSA 2048 certificate (trusted through NODE_EXTRA_CA_CERTS, as a production agent trusts the system store).`,
    `Ours: \`createChecker\` (probe-agent/src/check/check.ts) as the agent builds it, one \`run()\` per check. Floor: undici \`request()\` + \`body.dump()\` on one Agent (\`reset: true\` on fresh connections, no TLS session reuse, as ours).`,
    `Each client runs in a process of its own: ${concurrency} checks in flight, a warm-up of 10%, then ${Object.entries(counts)
      .map(([m, n]) => `${n.toLocaleString('en')} ${m}`)
      .join(
        ', ',
      )} checks (at most ${maxMs / 1000} s); CPU = process.cpuUsage() of that process over the measured checks / checks. ${rounds} round(s), clients alternating; medians.`,
    "Variant on fresh connections: ours with `process.setSourceMapsEnabled(false)`. The service runs through tsx, which turns source maps on, and undici destroys each closed socket with an error whose stack Node's streams read, which then goes through the source map.",
    `blackbox_exporter: its /probe endpoint asked ${Object.entries(probes)
      .map(([m, n]) => `${n.toLocaleString('en')} times (${m})`)
      .join(
        ' and ',
      )}, ${concurrency} at once, module http_2xx; its CPU read from /proc/<pid>/stat (utime+stime, all threads). It opens a fresh connection per probe.`,
  );

  const runs = new Map<string, WorkerAnswer[]>();
  const work = (client: CheckClient, mode: ConnectionMode, profile?: string, sourceMaps = true) => {
    const args: WorkerArgs = {
      client,
      mode,
      url: urls[mode],
      count: counts[mode],
      warmup: Math.max(100, Math.round(counts[mode] / 10)),
      concurrency,
      maxMs,
      sourceMaps,
      ...(profile ? { profile } : {}),
    };
    return runScript<WorkerAnswer>('parts/checks-worker.ts', [JSON.stringify(args)], {
      timeoutMs: maxMs * 3 + 30_000,
      env: { NODE_EXTRA_CA_CERTS: cert.certFile },
      label: `${client} ${mode}`,
    });
  };
  for (let r = 0; r < rounds; r++) {
    for (const mode of modes) {
      const variants: [CheckClient, boolean][] = clients.map((c) => [c, true]);
      if (mode !== 'keep-alive') variants.push(['ours', false]);
      for (const [client, sourceMaps] of r % 2 === 0 ? variants : [...variants].reverse()) {
        const a = await work(client, mode, undefined, sourceMaps);
        const name = `${client}${sourceMaps ? '' : ' (source maps off)'}`;
        ctx.log(
          `round ${r + 1} ${name} ${mode}: ${a.checks} checks, ${round(a.cpuUs / a.checks, 1)} µs CPU each, ${Math.round((a.checks * 1000) / a.wallMs)}/s, ${a.failures} failed`,
        );
        if (a.failures > 0) ctx.notes.push(`${a.failures} of ${a.checks} checks failed (${name}, ${mode}, round ${r + 1}).`);
        const key = `${client}${sourceMaps ? '' : '-nosm'}|${mode}`;
        runs.set(key, [...(runs.get(key) ?? []), a]);
      }
    }
  }
  const cpuPerCheck = (client: CheckClient | 'ours-nosm', mode: ConnectionMode) =>
    median(runs.get(`${client}|${mode}`)!.map((a) => a.cpuUs / a.checks));
  const rate = (client: CheckClient, mode: ConnectionMode) =>
    median(runs.get(`${client}|${mode}`)!.map((a) => (a.checks * 1000) / a.wallMs));

  for (const mode of modes) {
    const ours = cpuPerCheck('ours', mode);
    const bare = cpuPerCheck('bare', mode);
    const ratio = ours / bare;
    ctx.figures.push(
      {
        metric: `CPU per check, ${mode}`,
        value: round(ours, 1),
        unit: 'µs',
        baseline: { label: 'bare undici loop', value: round(bare, 1) },
        ratio: sig(ratio),
      },
      {
        metric: `Max sustained checks/s, ${mode}`,
        value: Math.round(rate('ours', mode)),
        unit: 'checks/s',
        baseline: { label: 'bare undici loop', value: Math.round(rate('bare', mode)) },
        ratio: sig(rate('ours', mode) / rate('bare', mode)),
      },
    );
    if (mode !== 'keep-alive') {
      const off = cpuPerCheck('ours-nosm', mode);
      ctx.figures.push({
        metric: `CPU per check, ${mode}, source maps off`,
        value: round(off, 1),
        unit: 'µs',
        baseline: { label: 'ours as shipped (tsx, source maps on)', value: round(ours, 1) },
        ratio: sig(off / ours),
      });
    }
    const met = ratio <= cpuRatioGoal;
    ctx.goals.push({
      goal: `CPU per check, ${mode}: at most ${cpuRatioGoal}x the bare loop`,
      actual: `${round(ratio)}x (${round(ours, 1)} vs ${round(bare, 1)} µs)`,
      met,
      ...(met
        ? {}
        : {
            shortfall: `${Math.round((ratio / cpuRatioGoal - 1) * 100)}% over the limit (${round(ours - bare * cpuRatioGoal, 1)} µs per check too many)`,
          }),
    });
    if (!met && !ctx.quick) {
      const tag = mode.replace(/\W+/g, '-');
      const o = await work('ours', mode, `checks-ours-${tag}`);
      const b = await work('bare', mode, `checks-bare-${tag}`);
      ctx.limits.push(
        {
          title: `Our checker, ${mode} (${round(ratio)}x the floor): where its CPU goes`,
          text: extraByCategory(o, b),
          profile: o.profile!,
        },
        { title: `Bare undici loop, ${mode}, for comparison`, profile: b.profile! },
      );
    }
  }

  const bin = findBlackbox();
  if (bin === undefined) {
    ctx.notes.push(`blackbox_exporter comparison not run: the binary is missing (${blackboxHint}).`);
    ctx.goals.push({
      goal: `Fresh TCP checks per CPU-second: at least ${blackboxGoal}x blackbox_exporter's probes`,
      actual: 'not run: blackbox_exporter missing',
      met: null,
    });
    return;
  }
  const bb = await startBlackbox(bin, dir, cert.certFile);
  ctx.cleanup(() => bb.stop());
  ctx.versions['blackbox_exporter'] = bb.version;
  const bbRuns: Record<'fresh TCP' | 'fresh TLS', ProbeRun[]> = { 'fresh TCP': [], 'fresh TLS': [] };
  for (let r = 0; r < rounds; r++) {
    for (const mode of ['fresh TCP', 'fresh TLS'] as const) {
      await probeLoop(bb, urls[mode], Math.round(probes[mode] / 10), concurrency, maxMs);
      const p = await probeLoop(bb, urls[mode], probes[mode], concurrency, maxMs);
      ctx.log(
        `round ${r + 1} blackbox ${mode}: ${p.probes} probes, ${round(p.cpuUs / p.probes, 1)} µs CPU each, ${Math.round((p.probes * 1000) / p.wallMs)}/s, ${p.failures} failed`,
      );
      if (p.failures > 0) ctx.notes.push(`${p.failures} of ${p.probes} blackbox_exporter probes failed (${mode}, round ${r + 1}).`);
      bbRuns[mode].push(p);
    }
  }
  for (const mode of ['fresh TCP', 'fresh TLS'] as const) {
    const oursPerCpuS = 1e6 / cpuPerCheck('ours', mode);
    const bbPerCpuS = median(bbRuns[mode].map((p) => (p.probes * 1e6) / p.cpuUs));
    const ratio = oursPerCpuS / bbPerCpuS;
    ctx.figures.push(
      {
        metric: `Checks per CPU-second, ${mode}`,
        value: Math.round(oursPerCpuS),
        unit: 'checks/CPU-s',
        baseline: { label: 'blackbox_exporter', value: Math.round(bbPerCpuS) },
        ratio: sig(ratio),
      },
      {
        metric: `Max sustained checks/s, ${mode}, vs blackbox_exporter`,
        value: Math.round(rate('ours', mode)),
        unit: 'checks/s',
        baseline: { label: 'blackbox_exporter', value: Math.round(median(bbRuns[mode].map((p) => (p.probes * 1000) / p.wallMs))) },
        ratio: sig(rate('ours', mode) / median(bbRuns[mode].map((p) => (p.probes * 1000) / p.wallMs))),
      },
    );
    if (mode !== 'fresh TCP') continue;
    const met = ratio >= blackboxGoal;
    ctx.goals.push({
      goal: `Fresh TCP checks per CPU-second: at least ${blackboxGoal}x blackbox_exporter's probes`,
      actual: `${round(ratio)}x (${Math.round(oursPerCpuS)} vs ${Math.round(bbPerCpuS)})`,
      met,
      ...(met ? {} : { shortfall: `${Math.round((1 - ratio / blackboxGoal) * 100)}% short` }),
    });
    if (!met && !ctx.quick && !ctx.limits.some((l) => l.title.startsWith(`Our checker, ${mode}`))) {
      const o = await work('ours', mode, 'checks-ours-fresh-TCP');
      ctx.limits.push({ title: `Our checker, ${mode}: where its CPU goes`, profile: o.profile! });
    }
  }
  ctx.notes.push(
    "blackbox_exporter's CPU includes answering /probe and rendering its metrics, which is how Prometheus uses it; the driver of those requests runs in the bench process and is not counted.",
  );
});
