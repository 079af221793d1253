import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../harness/db.ts';
import { requireTestEnv } from '../harness/env.ts';
import { assertClean } from './assert.ts';
import { writeResults, type ResultRow } from './results.ts';
import { runFault, startSuite, type Suite } from './suite.ts';

/**
 * kill -9 of the product's own processes under steady traffic: two probe agents and two
 * control-plane processes (every role) started through the CLI, on one NATS server. The killed
 * process is started again at once, as a supervisor would; the victims alternate.
 */
describe('killed processes', () => {
  let database: TestDatabase | undefined;
  let suite: Suite | undefined;
  const rows: ResultRow[] = [];

  before(async () => {
    database = await createTestDatabase({ migrate: false });
    suite = await startSuite({ databaseUrl: database.url, natsServers: requireTestEnv('nats'), replicas: 1 });
  });

  after(async () => {
    if (rows.length > 0) writeResults(import.meta.url, rows);
    await suite?.stop();
    await database?.drop();
  });

  it('loses and doubles nothing when a probe agent is killed with SIGKILL and restarted', async () => {
    const s = suite!;
    const { row, failures } = await runFault(s, {
      name: 'probe agent: kill -9, restart',
      async inject(cycle) {
        const agent = s.dep.agents[(cycle - 1) % s.dep.agents.length]!;
        const at = Date.now();
        await agent.proc.kill();
        s.observer.agentKilled(agent.id, at);
        await agent.proc.start();
        return { healedAt: Date.now() };
      },
    });
    rows.push(row);
    writeResults(import.meta.url, rows);
    assertClean(row, failures);
  });

  it('loses and doubles nothing when a control-plane process is killed with SIGKILL and restarted', async () => {
    const s = suite!;
    const { row, failures } = await runFault(s, {
      name: 'control plane: kill -9, restart',
      async inject(cycle) {
        const cp = s.dep.controlPlanes[(cycle - 1) % s.dep.controlPlanes.length]!;
        await cp.proc.kill();
        await cp.proc.start();
        return { healedAt: Date.now() };
      },
    });
    rows.push(row);
    writeResults(import.meta.url, rows);
    assertClean(row, failures);
  });
});
