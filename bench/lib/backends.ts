import { existsSync, readFileSync } from 'node:fs';
import { arrayLiteral, type Sql } from '../../control-plane/src/platform/db/sql.ts';
import { processCpuUs } from './proc.ts';

// The scheduler's own count of a thread's time on CPU, in nanoseconds; /proc/<pid>/stat counts in
// clock ticks (10 ms), too coarse for a backend that runs a few short queries a minute.
const schedstat = existsSync('/proc/self/schedstat');

/** CPU time of a single-threaded process (a Postgres backend), in microseconds. */
export function backendCpuUs(pid: number): number {
  return schedstat ? Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1000 : processCpuUs(pid);
}

export type BackendCpu = {
  /** CPU of these backends between start() and stop(), in microseconds. */
  cpuUs: number;
  /** Backends seen, and how many of them started meanwhile (connections opened). */
  backends: number;
  opened: number;
};

/**
 * CPU used by the Postgres backends of the connections whose application_name is one of `apps`
 * (each bench process names its pool): pg_stat_activity, read through `admin` (a connection of
 * the bench to another database, not counted) every `everyMs`, says which backends those are,
 * /proc how much CPU each used. A backend that starts meanwhile counts from its start; one that
 * ends takes the time since its last reading with it. The server must run on this machine.
 */
export function trackBackends(admin: Sql, apps: readonly string[], everyMs = 250) {
  const seen = new Map<number, { app: string; first: number; last: number; opened: boolean }>();
  let timer: NodeJS.Timeout | undefined;
  let sampling: Promise<void> = Promise.resolve();
  let stopped = false;

  const sample = async (initial: boolean) => {
    const rows = await admin<{ pid: number; app: string }[]>`
      select pid, application_name as app from pg_stat_activity where application_name = any(${arrayLiteral(apps)}::text[])`;
    const listed = new Set<number>();
    for (const r of rows) {
      listed.add(r.pid);
      let cpu: number;
      try {
        cpu = backendCpuUs(r.pid);
      } catch {
        continue; // ended meanwhile
      }
      const s = seen.get(r.pid);
      if (s) s.last = cpu;
      else seen.set(r.pid, { app: r.app, first: initial ? cpu : 0, last: cpu, opened: !initial });
    }
    // A backend no longer listed may still be exiting: its last reading is the closest to its end.
    for (const [pid, s] of seen) {
      if (listed.has(pid)) continue;
      try {
        s.last = backendCpuUs(pid);
      } catch {
        // gone
      }
    }
  };
  const loop = () => {
    timer = setTimeout(() => {
      sampling = sample(false).then(() => {
        if (!stopped) loop();
      });
    }, everyMs);
  };

  return {
    async start(): Promise<void> {
      await sample(true);
      loop();
    },
    async stop(): Promise<Record<string, BackendCpu>> {
      stopped = true;
      clearTimeout(timer);
      await sampling;
      await sample(false);
      const out: Record<string, BackendCpu> = Object.fromEntries(apps.map((a) => [a, { cpuUs: 0, backends: 0, opened: 0 }]));
      for (const s of seen.values()) {
        const o = out[s.app]!;
        o.cpuUs += s.last - s.first;
        o.backends++;
        if (s.opened) o.opened++;
      }
      return out;
    },
  };
}
