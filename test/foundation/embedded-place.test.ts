import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { welcomeScreen } from '../../control-plane/src/cli/welcome.ts';
import { outsideDir, placeCluster } from '../../control-plane/src/platform/embedded/postgres-dir.ts';

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
