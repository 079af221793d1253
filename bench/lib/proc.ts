import { execFileSync } from 'node:child_process';
import { accessSync, constants, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { delimiter, join } from 'node:path';

const clockTicks = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User plus system CPU time of another process (all its threads), in microseconds, from /proc. */
export function processCpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which may itself contain spaces: state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / clockTicks;
}

/**
 * User plus system CPU time, in microseconds, of every process on the machine whose command name
 * is one of `names` (e.g. every backend of a Postgres server), from /proc. Processes that end
 * between two readings take their time with them: compare readings over short windows.
 */
export function cpuUsByCommand(names: readonly string[]): Record<string, number> {
  const total: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    if (!(comm in total)) continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    total[comm]! += ((Number(fields[11]) + Number(fields[12])) * 1e6) / clockTicks;
  }
  return total;
}

/** Resident set size of another process, in bytes. */
export function processRssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** The first executable among explicit, PATH and extra places, or undefined. */
export function findBinary(name: string, extra: string[] = [], explicit?: string): string | undefined {
  const candidates = explicit
    ? [explicit]
    : [
        ...(process.env.PATH ?? '')
          .split(delimiter)
          .filter(Boolean)
          .map((d) => join(d, name)),
        ...extra,
      ];
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // next
    }
  }
  return undefined;
}

export function versionOf(bin: string, args: string[], pattern: RegExp): string {
  try {
    const out = execFileSync(bin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return pattern.exec(out)?.[1] ?? out.trim().split('\n')[0]!;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    const out = `${e.stdout ?? ''}${e.stderr ?? ''}`;
    return pattern.exec(out)?.[1] ?? 'unknown';
  }
}

/** Busy and total CPU time of the whole machine so far (all cores), in clock ticks, from /proc/stat. */
export function machineCpuTicks(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.slice(0, 8).reduce((t, v) => t + v, 0);
  return { busy: total - fields[3]! - fields[4]!, total };
}

/** Resolves once another process uses less than `share` of a core over 300 ms (its backlog done), or after maxMs. */
export async function waitIdle(pid: number, share = 0.1, maxMs = 30_000): Promise<void> {
  const deadline = Date.now() + maxMs;
  while (Date.now() < deadline) {
    const before = processCpuUs(pid);
    await new Promise((r) => setTimeout(r, 300));
    if (processCpuUs(pid) - before < share * 300_000) return;
  }
}

/**
 * The processes listening on this TCP port of this machine (from /proc/net/tcp{,6} and each
 * process's open sockets): on a machine where others run their own servers too, the one a part
 * talks to, rather than every process of that name.
 */
export function pidsListeningOn(port: number): number[] {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; state 0A is LISTEN; the inode is field 10.
      if (f.length > 9 && f[3] === '0A' && parseInt(f[1]!.split(':')[1]!, 16) === port) inodes.add(f[9]!);
    }
  }
  const pids: number[] = [];
  if (inodes.size === 0) return pids;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target = '';
      try {
        target = readlinkSync(`/proc/${entry}/fd/${fd}`);
      } catch {
        continue;
      }
      const m = /^socket:\[(\d+)\]$/.exec(target);
      if (m && inodes.has(m[1]!)) {
        pids.push(Number(entry));
        break;
      }
    }
  }
  return pids;
}
