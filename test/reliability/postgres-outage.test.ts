import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { requireTestEnv } from '../harness/env.ts';
import { assertClean } from './assert.ts';
import { startOwnedPostgres, type OwnedPostgres } from './postgres.ts';
import { p50max, writeResults, type ResultRow } from './results.ts';
import { runFault, startSuite, type Suite } from './suite.ts';
import { send } from './traffic.ts';

/** How long Postgres stays down per cycle (RELIABILITY_PG_OUTAGE_MS shortens a local run). */
const outageMs = Number(process.env.RELIABILITY_PG_OUTAGE_MS ?? 30_000);
/** An answer slower than this during the outage counts as a hang. */
const answerWithinMs = 3_000;

interface Probe {
  what: string;
  status: number | string;
  ms: number;
  message: unknown;
}

/**
 * Postgres stopped for 30 s under steady traffic: a Postgres of the suite's own (the product's
 * embedded one, on a port of its own) under two control-plane processes and two probe agents
 * started through the CLI. While it is down, the API is asked every second and must answer 503
 * with a JSON message at once; pings the regional edges accepted meanwhile are processed after.
 */
describe('Postgres outage', () => {
  let pg: OwnedPostgres | undefined;
  let suite: Suite | undefined;
  const rows: ResultRow[] = [];

  before(async () => {
    pg = await startOwnedPostgres();
    suite = await startSuite({ databaseUrl: pg.databaseUrl, natsServers: requireTestEnv('nats'), replicas: 1 });
  });

  after(async () => {
    if (rows.length > 0) writeResults(import.meta.url, rows);
    await suite?.stop();
    await pg?.close();
  });

  it('answers 503 while Postgres is down and loses and doubles nothing once it is back', async () => {
    const s = suite!;
    const db = pg!;
    const { token, controlPlanes, agents } = s.dep;
    const probes: Probe[] = [];
    const acceptedByEdges = { during: 0 };

    const probeApi = async () => {
      for (const [i, cp] of controlPlanes.entries()) {
        const asks: [string, Promise<Awaited<ReturnType<typeof send>>>][] = [
          ['GET /monitors', send('GET', `${cp.url}/monitors`, { headers: { authorization: `Bearer ${token}` }, timeoutMs: 15_000 })],
          [
            'POST /api/notify/<id>',
            send('POST', `${cp.url}/api/notify/${s.workload.triggerId}`, {
              body: JSON.stringify({ message: 'during the outage' }),
              headers: { 'content-type': 'application/json' },
              timeoutMs: 15_000,
            }),
          ],
          ['GET /readyz', send('GET', `${cp.url}/readyz`, { timeoutMs: 15_000 })],
        ];
        for (const [what, ask] of asks) {
          const res = await ask;
          let message: unknown;
          if ('status' in res) {
            try {
              message = (JSON.parse(res.body) as { message?: unknown }).message;
            } catch {
              message = undefined;
            }
          }
          probes.push({ what: `${what} (control plane ${i + 1})`, status: 'status' in res ? res.status : res.error, ms: res.ms, message });
        }
      }
    };

    const { row, failures } = await runFault(
      s,
      {
        name: `Postgres: stopped for ${Math.round(outageMs / 1000)} s`,
        recoveryFrom: 'heal',
        async inject() {
          const stoppedAt = Date.now();
          const ackedBefore = s.ledger.acked.length;
          await db.stop();
          while (Date.now() < stoppedAt + outageMs) {
            await probeApi();
            await new Promise((r) => setTimeout(r, Math.max(0, Math.min(1_000, stoppedAt + outageMs - Date.now()))));
          }
          const edges = new Set(agents.map((a) => `edge-${a.id}`));
          acceptedByEdges.during += s.ledger.acked.slice(ackedBefore).filter((a) => edges.has(a.via)).length;
          await db.start();
          return { healedAt: Date.now() };
        },
        notes: () => {
          const ms = p50max(probes.map((p) => p.ms));
          return `${acceptedByEdges.during} pings accepted by the regional edges while Postgres was down; API answered ${probes.length} requests during the outage, ${ms.p50} ms median, ${ms.max} ms at most`;
        },
      },
      Number(process.env.RELIABILITY_PG_CYCLES ?? process.env.RELIABILITY_CYCLES ?? 10),
    );
    rows.push(row);
    writeResults(import.meta.url, rows);

    assert.ok(probes.length > 0);
    const bad = probes.filter((p) => p.status !== 503 || typeof p.message !== 'string' || p.message.length === 0 || p.ms > answerWithinMs);
    assert.deepEqual(
      bad.slice(0, 10),
      [],
      `${bad.length} of ${probes.length} answers during the outage were not a quick 503 with a JSON message`,
    );
    assert.ok(acceptedByEdges.during > 0, 'the regional edges accepted pings while Postgres was down');
    assertClean(row, failures);
  });
});
