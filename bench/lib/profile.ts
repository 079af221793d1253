import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { resultsDir } from './result.ts';
import { round } from './stats.ts';

type CallFrame = { functionName: string; url: string; lineNumber: number };
export type CpuProfile = {
  nodes: { id: number; callFrame: CallFrame; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
};

export type ProfileSummary = {
  file: string;
  /** Sampled time that was not idle. */
  busyMs: number;
  categories: { name: string; ms: number; pct: number }[];
  top: { fn: string; where: string; selfMs: number; pct: number }[];
};

/**
 * Starts the V8 CPU profiler (what `node --cpu-prof` runs) in this process; the returned function
 * stops it, writes bench/results/profiles/<name>.cpuprofile and summarises it.
 */
export async function startProfiling(intervalUs = 200): Promise<(name: string) => Promise<ProfileSummary>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
  await session.post('Profiler.start');
  return async (name) => {
    const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: CpuProfile };
    session.disconnect();
    const dir = join(resultsDir, 'profiles');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    return summariseProfile(profile, `bench/results/profiles/${name}.cpuprofile`);
  };
}

/** Profiles the measured window only, so start-up and warm-up do not dilute it. */
export async function profiled<T>(name: string, fn: () => Promise<T>, intervalUs = 200): Promise<{ result: T; profile: ProfileSummary }> {
  const stop = await startProfiling(intervalUs);
  const result = await fn();
  return { result, profile: await stop(name) };
}

function categoryOf(f: CallFrame): string {
  if (f.url === '') return f.functionName.startsWith('(') ? f.functionName : 'native';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f.url);
  if (pkg) return pkg[1]!;
  const node = /^node:(?:internal\/)?([^/]+)/.exec(f.url);
  if (node) return `node:${node[1]}`;
  const own = /\/(probe-agent|control-plane|shared|bench)\/src\/([^/]+)|\/(bench)\/([^/]+)/.exec(f.url);
  if (own) return own[1] ? `${own[1]}/${own[2]!.replace(/\.ts$/, '')}` : `bench/${own[4]!.replace(/\.ts$/, '')}`;
  return f.url.replace(/^file:\/\//, '');
}

export function summariseProfile(profile: CpuProfile, file: string, topN = 14): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  const ancestors = function* (id: number) {
    for (let at = parentOf.get(id); at !== undefined; at = parentOf.get(at)) yield byId.get(at)!;
  };
  // The profiler's own start (inspector calls made by startProfiling) is not the code measured.
  const isProfiler = (id: number) => [...ancestors(id)].some((f) => f.functionName === 'startProfiling');
  // A native function (a socket write, an encoder) is told apart by the package that called it.
  const viaOf = (id: number) => {
    for (const f of ancestors(id)) if (f.url !== '' && !f.url.startsWith('node:')) return categoryOf(f);
    return undefined;
  };
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const categories = new Map<string, number>();
  const functions = new Map<string, { fn: string; where: string; us: number }>();
  let busyUs = 0;
  for (const [id, us] of self) {
    const f = byId.get(id)!;
    if (f.functionName === '(idle)' || isProfiler(id)) continue;
    busyUs += us;
    const native = f.url === '' && !f.functionName.startsWith('(');
    const via = native ? viaOf(id) : undefined;
    const cat = via ? `native, called by ${via}` : categoryOf(f);
    categories.set(cat, (categories.get(cat) ?? 0) + us);
    const where = f.url
      ? `${f.url.replace(/^.*\/(node_modules|probe-agent|control-plane|shared|bench)\//, '$1/')}:${f.lineNumber + 1}`
      : via
        ? `called by ${via}`
        : '';
    const key = `${f.functionName}@${where}`;
    const entry = functions.get(key) ?? { fn: f.functionName || '(anonymous)', where, us: 0 };
    entry.us += us;
    functions.set(key, entry);
  }
  const pct = (us: number) => Math.round((1000 * us) / Math.max(1, busyUs)) / 10;
  const ms = (us: number) => Math.round(us / 100) / 10;
  return {
    file,
    busyMs: ms(busyUs),
    categories: [...categories]
      .sort((a, b) => b[1] - a[1])
      .slice(0, topN)
      .map(([name, us]) => ({ name, ms: ms(us), pct: pct(us) })),
    top: [...functions.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, topN)
      .map((f) => ({ fn: f.fn, where: f.where, selfMs: ms(f.us), pct: pct(f.us) })),
  };
}

/** Sampled CPU per check by where it is spent, ours minus the floor's: what our code adds. */
export function extraByCategory(
  ours: { checks: number; profile?: ProfileSummary },
  floor: { checks: number; profile?: ProfileSummary },
): string {
  const perCheck = (a: { checks: number; profile?: ProfileSummary }) =>
    new Map((a.profile?.categories ?? []).map((c) => [c.name, (c.ms * 1000) / a.checks]));
  const o = perCheck(ours);
  const b = perCheck(floor);
  const rows = [...new Set([...o.keys(), ...b.keys()])]
    .map((name) => ({ name, delta: (o.get(name) ?? 0) - (b.get(name) ?? 0) }))
    .filter((r) => r.delta > 0)
    .sort((x, y) => y.delta - x.delta)
    .slice(0, 6);
  const total = (m: Map<string, number>) => [...m.values()].reduce((t, v) => t + v, 0);
  return `In the profiled runs ours spent ${round(total(o), 1)} µs of sampled CPU per check, the floor ${round(total(b), 1)} µs (top categories only). Most of the difference: ${rows.map((r) => `\`${r.name}\` +${round(r.delta, 1)} µs`).join(', ')}.`;
}
