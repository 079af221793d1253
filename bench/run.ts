/**
 * `npm run bench [-- <part>...] [--quick] [--report]`: runs the parts (all by default), each in a
 * process of its own, then regenerates BENCHMARKS.md from every file in bench/results/.
 * --report only regenerates BENCHMARKS.md. Parts: checks, check-types, schedule, pings, misses, apply, ingest, agent-memory, first-check, cli, maintenance, alerts, status-page, heartbeat-scale.
 */
import { spawn } from 'node:child_process';
import { scriptPath } from './lib/child.ts';
import { writeReport } from './lib/report.ts';
import { parts, readResults, type Part } from './lib/result.ts';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const reportOnly = argv.includes('--report');
const unknownFlags = argv.filter((a) => a.startsWith('--') && a !== '--quick' && a !== '--report');
const named = argv.filter((a) => !a.startsWith('--'));
const unknown = named.filter((p) => !(parts as readonly string[]).includes(p));
if (unknown.length > 0 || unknownFlags.length > 0) {
  process.stderr.write(`unknown ${[...unknown, ...unknownFlags].join(', ')}; parts are ${parts.join(', ')}; flags --quick, --report\n`);
  process.exit(2);
}
const selected: Part[] = named.length > 0 ? (named as Part[]) : reportOnly ? [] : [...parts];

// Parts that read the heap size need a collector they can call.
const nodeFlags: Partial<Record<Part, string[]>> = { 'agent-memory': ['--expose-gc'], misses: ['--expose-gc'] };
const tsx = import.meta.resolve('tsx');

function runPart(part: Part): Promise<number> {
  const limitMs = (quick ? 3 : 20) * 60_000;
  process.stderr.write(`\n== ${part}${quick ? ' (quick)' : ''}\n`);
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [...(nodeFlags[part] ?? []), '--import', tsx, scriptPath(`parts/${part}.ts`), ...(quick ? ['--quick'] : [])],
      {
        stdio: ['ignore', 'inherit', 'inherit'],
      },
    );
    const timer = setTimeout(() => {
      process.stderr.write(`${part} ran past ${limitMs / 60_000} minutes: stopping it\n`);
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
    }, limitMs);
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

let failed = 0;
for (const part of selected) if ((await runPart(part)) !== 0) failed++;
const file = writeReport(readResults());
process.stderr.write(`\nwrote ${file}${failed > 0 ? ` (${failed} part(s) failed)` : ''}\n`);
process.exit(failed > 0 ? 1 : 0);
