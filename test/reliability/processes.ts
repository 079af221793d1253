import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { cleanEnv, uptimeBin } from '../harness/cli.ts';

/**
 * A long-running `uptime <command>` child (a control plane or a probe agent) that a test kills
 * with SIGKILL and starts again with the same settings, as a supervisor would. Its output is kept
 * as a short tail; an exit the test did not cause is recorded as a crash.
 */
export interface ManagedProcess {
  name: string;
  pid(): number | undefined;
  running(): boolean;
  /** Starts the command; resolves once its output shows it is ready. */
  start(): Promise<void>;
  /** kill -9; resolves once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM (a graceful stop), SIGKILL after 15 s. */
  stop(): Promise<void>;
  /** SIGSTOP: frozen with its sockets, timers and leases as they were. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** The last lines it printed. */
  tail(): string;
  /** Log lines at level error or above (pino level >= 50), the newest last, at most 200. */
  errors(): string[];
  /** Exits nobody asked for. */
  crashes(): { code: number | null; signal: string | null; tail: string }[];
}

const TAIL_BYTES = 24_000;

/** Children still running, killed if the test process ends without stopping them. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

export function managedProcess(opts: {
  name: string;
  args: string[];
  env: Record<string, string>;
  /** Matched against everything printed since the start. */
  ready: RegExp;
  readyTimeoutMs?: number;
}): ManagedProcess {
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let expectExit = false;
  let tail = '';
  const errors: string[] = [];
  const crashes: { code: number | null; signal: string | null; tail: string }[] = [];

  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  // RELIABILITY_LOG_DIR keeps every line each process printed (for looking into a failure).
  const logDir = process.env.RELIABILITY_LOG_DIR;
  if (logDir) mkdirSync(logDir, { recursive: true });
  const onOutput = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    if (logDir) appendFileSync(join(logDir, `${opts.name}.log`), text);
    tail = (tail + text).slice(-TAIL_BYTES);
    if (!text.includes('"level":5') && !text.includes('"level":6')) return;
    for (const line of text.split('\n')) {
      if (/"level":[56]\d/.test(line)) {
        errors.push(line.slice(0, 2_000));
        if (errors.length > 200) errors.shift();
      }
    }
  };

  const proc: ManagedProcess = {
    name: opts.name,
    pid: () => (running() ? child!.pid : undefined),
    running,
    start() {
      if (running()) return Promise.resolve();
      expectExit = false;
      const c = spawn(process.execPath, [uptimeBin, ...opts.args], { env: cleanEnv(opts.env), stdio: ['ignore', 'pipe', 'pipe'] });
      child = c;
      live.add(c);
      let seen = '';
      const timeoutMs = opts.readyTimeoutMs ?? 60_000;
      return new Promise<void>((resolve, reject) => {
        let settled = false;
        const settle = (err?: Error) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          if (err) reject(err);
          else resolve();
        };
        const timer = setTimeout(() => {
          c.kill('SIGKILL');
          settle(new Error(`${opts.name} was not ready within ${timeoutMs} ms:\n${tail}`));
        }, timeoutMs);
        const watch = (chunk: Buffer) => {
          onOutput(chunk);
          if (settled) return;
          seen = (seen + chunk.toString('utf8')).slice(-TAIL_BYTES);
          if (opts.ready.test(seen)) settle();
        };
        c.stdout!.on('data', watch);
        c.stderr!.on('data', watch);
        exited = new Promise<void>((done) =>
          c.once('exit', (code, signal) => {
            live.delete(c);
            if (!expectExit) crashes.push({ code, signal, tail });
            settle(new Error(`${opts.name} exited (${code ?? signal}) before it was ready:\n${tail}`));
            done();
          }),
        );
      });
    },
    async kill() {
      if (!running()) return;
      expectExit = true;
      child!.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (!running()) return;
      expectExit = true;
      child!.kill('SIGTERM');
      const killer = setTimeout(() => child?.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
    },
    pause() {
      if (running()) child!.kill('SIGSTOP');
    },
    resume() {
      if (running()) child!.kill('SIGCONT');
    },
    tail: () => tail,
    errors: () => [...errors],
    crashes: () => [...crashes],
  };
  return proc;
}
