import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { clash, portsInUse, portTakenMessage, type PortUse } from '../../control-plane/src/cli/ports.ts';
import { freePort, freePorts } from '../../control-plane/src/platform/embedded/ports.ts';
import { runCli } from '../harness/cli.ts';

const config = { PORT: 3000, METRICS_PORT: 3000, AGENT_PORT: 3001, PING_PORT: 3002 };
const apart = { ...config, METRICS_PORT: 9100 };

describe('the ports a server command checks before starting', () => {
  const rows: [string, typeof config, Parameters<typeof portsInUse>[1], PortUse[]][] = [
    [
      'start: the API and the agent',
      config,
      { api: true, controlPlane: true, agent: true },
      [
        { variable: 'PORT', port: 3000 },
        { variable: 'AGENT_PORT', port: 3001 },
        { variable: 'PING_PORT', port: 3002 },
      ],
    ],
    [
      'start with METRICS_PORT apart',
      apart,
      { api: true, controlPlane: true, agent: true },
      [
        { variable: 'PORT', port: 3000 },
        { variable: 'METRICS_PORT', port: 9100 },
        { variable: 'AGENT_PORT', port: 3001 },
        { variable: 'PING_PORT', port: 3002 },
      ],
    ],
    [
      'control-plane without the api role: its ops listener on PORT',
      config,
      { api: false, controlPlane: true, agent: false },
      [{ variable: 'PORT', port: 3000 }],
    ],
    [
      'control-plane without api, METRICS_PORT set',
      apart,
      { api: false, controlPlane: true, agent: false },
      [{ variable: 'METRICS_PORT', port: 9100 }],
    ],
    [
      'probe-agent',
      config,
      { api: false, controlPlane: false, agent: true },
      [
        { variable: 'AGENT_PORT', port: 3001 },
        { variable: 'PING_PORT', port: 3002 },
      ],
    ],
  ];
  for (const [name, cfg, run, expected] of rows) it(name, () => assert.deepEqual(portsInUse(cfg, run), expected));

  it('names two settings that share a port', () => {
    assert.equal(
      clash(portsInUse({ ...config, AGENT_PORT: 3000 }, { api: true, controlPlane: true, agent: true })),
      'PORT and AGENT_PORT are both 3000: set one of them to another port',
    );
    assert.equal(clash(portsInUse(config, { api: true, controlPlane: true, agent: true })), undefined);
  });

  const messages: [string | undefined, RegExp][] = [
    [
      'EADDRINUSE',
      /^port 3001 \(AGENT_PORT\) on 127\.0\.0\.1 is already in use: .*set AGENT_PORT to a free port \(e\.g\. AGENT_PORT=3011\)$/,
    ],
    ['EACCES', /needs privileges this user lacks: set AGENT_PORT to a port above 1023$/],
    ['EADDRNOTAVAIL', /127\.0\.0\.1 is not an address of this machine: set HOST$/],
  ];
  for (const [code, expected] of messages) {
    it(`says which variable to change on ${code}`, () =>
      assert.match(portTakenMessage({ variable: 'AGENT_PORT', port: 3001 }, '127.0.0.1', code), expected));
  }
});

describe('free ports drawn together', () => {
  it('are distinct, and free again once drawn', async () => {
    for (let round = 0; round < 20; round++) {
      const ports = await freePorts(4);
      assert.equal(new Set(ports).size, 4, `drawn: ${ports.join(', ')}`);
      // Each can be listened on: none is held by the draw.
      const servers = await Promise.all(
        ports.map(
          (port) =>
            new Promise<Server>((resolve, reject) => {
              const srv = createServer();
              srv.once('error', reject);
              srv.listen(port, '127.0.0.1', () => resolve(srv));
            }),
        ),
      );
      await Promise.all(servers.map((srv) => new Promise((resolve) => srv.close(resolve))));
    }
  });
});

describe('uptime start on a taken port', () => {
  let blocker: Server;
  let taken: number;
  let dataDir: string;
  before(async () => {
    taken = await freePort();
    blocker = createServer();
    await new Promise<void>((r) => blocker.listen(taken, '127.0.0.1', r));
    dataDir = mkdtempSync(join(tmpdir(), 'uptime-ports-'));
  });
  after(async () => {
    await new Promise((r) => blocker.close(r));
    rmSync(dataDir, { recursive: true, force: true });
  });

  for (const variable of ['PORT', 'AGENT_PORT', 'PING_PORT'] as const) {
    it(`stops before starting anything, in one line naming ${variable}`, async () => {
      const [port, agentPort, pingPort] = await freePorts(3);
      const env: Record<string, string> = {
        DATA_DIR: dataDir,
        PORT: String(port),
        AGENT_PORT: String(agentPort),
        PING_PORT: String(pingPort),
        [variable]: String(taken),
      };
      const r = await runCli(['start'], env);
      assert.equal(r.code, 1);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(`^port ${taken} \\(${variable}\\) on 127\\.0\\.0\\.1 is already in use: .*set ${variable} to a free port`),
      );
      assert.doesNotMatch(r.stderr, /EADDRINUSE|\n\s+at /);
      assert.equal(existsSync(join(dataDir, 'postgres.json')), false, 'no Postgres was started');
    });
  }
});
