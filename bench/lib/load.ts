import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runScript } from './child.ts';
import { findBinary, versionOf } from './proc.ts';

export type LoadArgs = {
  url: string;
  paths: string[];
  connections: number;
  durationS: number;
  rate?: number;
  /** Sent with every request (bench/parts/pings-load.ts only). */
  headers?: Record<string, string>;
};
export type LoadResult = {
  tool: 'wrk' | 'bench generator';
  /** Responses received. */
  requests: number;
  ok: number;
  /** Answers other than 2xx, and requests with no answer. */
  errors: number;
  /** Requests with no answer: socket errors, or none within 10 s (curl -m 10, as cron jobs are told to use). */
  unanswered: number;
  rps: number;
  p50: number;
  /** Not measured by every tool. */
  p95?: number;
  p99: number;
  max: number;
  durationS: number;
  /** Requests sent again once because their kept-alive connection closed before any byte of the answer (bench/parts/pings-load.ts only). */
  resent?: number;
  /** What the errors were (bench/parts/pings-load.ts only): by status, or closed connections, or late answers. */
  errorKinds?: Record<string, number>;
};

export const findWrk = () => findBinary('wrk', ['/usr/bin/wrk'], process.env.WRK_BIN);
export const wrkVersion = (bin: string) => versionOf(bin, ['-v'], /wrk (\S+)/);

/**
 * Fixed rates from bench/parts/pings-load.ts: wrk cannot pace, and autocannon's overallRate sends
 * each second's quota in a burst, which measures its own queue rather than the server.
 */
export function pacedLoad(args: LoadArgs): Promise<LoadResult> {
  return runScript<LoadResult>('parts/pings-load.ts', [JSON.stringify(args)], { timeoutMs: args.durationS * 1000 + 90_000, label: 'load' });
}

const toMs = (v: string, unit: string) => Number(v) * (unit === 'us' ? 0.001 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : 1);

/** wrk at full speed (as many requests as `connections` connections can make), paths in turn from a Lua script. */
export function wrkLoad(bin: string, dir: string, args: LoadArgs, onPid?: (pid: number) => void): Promise<LoadResult> {
  const script = join(dir, 'paths.lua');
  writeFileSync(
    script,
    [
      `local paths = { ${args.paths.map((p) => JSON.stringify(p)).join(', ')} }`,
      'local i = 0',
      'request = function()',
      '  i = i % #paths + 1',
      '  return wrk.format("GET", paths[i])',
      'end',
      '',
    ].join('\n'),
  );
  return new Promise((resolve, reject) => {
    const child = spawn(
      bin,
      ['-t2', `-c${args.connections}`, `-d${args.durationS}s`, '--timeout', '10s', '--latency', '-s', script, args.url],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    if (child.pid) onPid?.(child.pid);
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), args.durationS * 1000 + 30_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? NaN);
      const lat = (p: string) => {
        const m = new RegExp(`^\\s*${p}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(out);
        return m ? toMs(m[1]!, m[2]!) : NaN;
      };
      const max = /^\s*Latency\s+\S+\s+\S+\s+([\d.]+)(us|ms|s|m)/m.exec(out);
      const requests = num(/(\d+) requests in/);
      const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
      const socketErrors = socket ? socket.slice(1).reduce((t, v) => t + Number(v), 0) : 0;
      const non2xx = num(/Non-2xx or 3xx responses: (\d+)/) || 0;
      if (code !== 0 || Number.isNaN(requests)) return reject(new Error(`wrk exited with ${code}:\n${out}`));
      resolve({
        tool: 'wrk',
        requests,
        ok: requests - non2xx,
        errors: socketErrors + non2xx,
        unanswered: socketErrors,
        rps: num(/Requests\/sec:\s+([\d.]+)/),
        p50: lat('50'),
        p99: lat('99'),
        max: max ? toMs(max[1]!, max[2]!) : NaN,
        durationS: args.durationS,
      });
    });
  });
}
