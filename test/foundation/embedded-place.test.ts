import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { welcomeScreen } from '../../control-plane/src/cli/welcome.ts';
import { binariesFor, canExecute, packagedBinaries } from '../../control-plane/src/platform/embedded/postgres-binaries.ts';
import { outsideDir, placeCluster, postgresUser } from '../../control-plane/src/platform/embedded/postgres-dir.ts';

describe('where the embedded Postgres keeps its cluster', () => {
  const inside = '/home/me/uptime/data/postgres';
  const outside = '/var/lib/uptime/0123456789abcdef';
  const rows: [string, Partial<Parameters<typeof placeCluster>[0]>, { dir: string; outside: boolean }][] = [
    ['where postgres.json says, once recorded', { recorded: outside }, { dir: outside, outside: true }],
    ['in DATA_DIR when recorded there', { recorded: inside, postgresCanEnter: () => false }, { dir: inside, outside: false }],
    [
      'in DATA_DIR when a cluster is set up there already',
      { initialisedInside: true, postgresCanEnter: () => false },
      { dir: inside, outside: false },
    ],
    ['in DATA_DIR when the postgres user can enter it', { postgresCanEnter: () => true }, { dir: inside, outside: false }],
    [
      'outside when the postgres user cannot enter DATA_DIR (root, a 0700 parent)',
      { postgresCanEnter: () => false },
      { dir: outside, outside: true },
    ],
  ];
  for (const [name, given, expected] of rows) {
    it(name, () =>
      assert.deepEqual(
        placeCluster({
          recorded: undefined,
          inside,
          initialisedInside: false,
          postgresCanEnter: () => true,
          outside: () => outside,
          ...given,
        }),
        expected,
      ),
    );
  }

  it('names the outside directory after the real path of DATA_DIR, so every path to it agrees', () => {
    const dir = mkdtempSync(join(tmpdir(), 'uptime-place-'));
    try {
      symlinkSync(dir, `${dir}-link`);
      assert.equal(outsideDir(`${dir}-link`), outsideDir(dir));
      assert.match(outsideDir(dir), /^\/var\/lib\/uptime\/[0-9a-f]{16}$/);
      assert.notEqual(outsideDir(tmpdir()), outsideDir(dir));
    } finally {
      rmSync(`${dir}-link`, { force: true });
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the Postgres programs the postgres user runs', () => {
  it('are those in node_modules when it can reach them, and a copy outside a private checkout otherwise', async () => {
    const packaged = await packagedBinaries();
    assert.equal(binariesFor(undefined, packaged), packaged.binaries, 'not root: the packaged ones');
    if (process.getuid?.() !== 0) return;
    const user = postgresUser();
    // A checkout under /root: the package's programs inside a directory closed to the postgres user.
    const checkout = mkdtempSync(join(tmpdir(), 'uptime-bins-'));
    const base = mkdtempSync(join(tmpdir(), 'uptime-bins-base-'));
    try {
      chmodSync(checkout, 0o700);
      chmodSync(base, 0o755);
      const closedRoot = join(checkout, 'native');
      cpSync(packaged.binaries.root, closedRoot, { recursive: true, verbatimSymlinks: true });
      const closed = { root: closedRoot, initdb: join(closedRoot, 'bin/initdb'), postgres: join(closedRoot, 'bin/postgres') };
      assert.equal(canExecute(closed.postgres, user), false);

      const copy = binariesFor(user, { binaries: closed, version: '0.0.0-test' }, base);
      assert.equal(copy.root, join(base, 'postgres-0.0.0-test'));
      assert.ok(canExecute(copy.postgres, user));
      const version = execFileSync(copy.postgres, ['--version'], { uid: user.uid, gid: user.gid, encoding: 'utf8' });
      assert.match(version, /^postgres \(PostgreSQL\) \d+/, 'runs as the postgres user, libraries found beside it');
      assert.deepEqual(binariesFor(user, { binaries: closed, version: '0.0.0-test' }, base), copy, 'made once, then reused');
    } finally {
      rmSync(checkout, { recursive: true, force: true });
      rmSync(base, { recursive: true, force: true });
    }
  });
});

describe('the first screen of uptime start', () => {
  const screen = welcomeScreen({
    url: 'http://127.0.0.1:3000',
    pingBaseUrl: 'http://127.0.0.1:3000',
    triggerBaseUrl: 'http://127.0.0.1:3000',
    agentPingUrl: 'http://127.0.0.1:3002',
    region: 'local',
    dataDir: '/root/uptime/data',
    postgresDir: '/var/lib/uptime/0123456789abcdef',
  });
  const expected: [string, RegExp][] = [
    ['the line scripts wait for', /^uptime is running: API and dashboard at http:\/\/127\.0\.0\.1:3000$/m],
    ['the dashboard', /dashboard +http:\/\/127\.0\.0\.1:3000\/$/m],
    ['the API docs', /API docs +http:\/\/127\.0\.0\.1:3000\/docs/],
    [
      'the ping URLs, the agent edge too',
      /ping URLs +http:\/\/127\.0\.0\.1:3000\/heartbeat\/<id>[^\n]*\n +http:\/\/127\.0\.0\.1:3002\/heartbeat\/<id>/,
    ],
    ['the notify URLs', /notify URLs +http:\/\/127\.0\.0\.1:3000\/api\/notify\/<id>/],
    ['where the data is', /data +\/root\/uptime\/data +\(Postgres in \/var\/lib\/uptime\/0123456789abcdef\)/],
    ['how to make the first account', /npm run uptime -- user create --email you@example\.com --password/],
    ['how to make a token', /npm run uptime -- token create --email you@example\.com --name laptop/],
    ['how to stop', /Ctrl-C stops everything/],
  ];
  for (const [what, pattern] of expected) it(`says ${what}`, () => assert.match(screen, pattern));
});
