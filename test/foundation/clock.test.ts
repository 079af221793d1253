import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resultMsgId, type CheckResult } from '../../shared/src/contracts/monitoring.ts';
import { apiClient } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount } from '../harness/factories.ts';
import { eventually, publishJson } from '../harness/streams.ts';
import { manualClock, type ManualClock } from '../heartbeats/manual-clock.ts';

const day = 86_400_000;

/**
 * One clock for every role of a process: startControlPlane hands the clock it is given to the API
 * (its rules, token use, rate limits), ingest, retention, notify, assign and the deadline role. Here
 * the clock stands a day ahead of the wall clock and moves only when told to.
 */
describe('one clock for every role', () => {
  let cp: TestControlPlane;
  let clock: ManualClock;
  before(async () => {
    clock = manualClock(Date.now() + day);
    cp = await startTestControlPlane({ roles: ['api', 'ingest'], env: { API_RATE_LIMIT: '2' }, clock });
  });
  after(() => cp.stop());

  it('limits API requests by the clock: a minute on the clock refills the bucket', async () => {
    const account = await createAccount(cp.db.sql);
    const api = apiClient(cp.url, account.token);
    assert.equal((await api('GET', '/projects')).status, 200);
    assert.equal((await api('GET', '/projects')).status, 200);
    assert.equal((await api('GET', '/projects')).status, 429);
    clock.advance(60_000);
    assert.equal((await api('GET', '/projects')).status, 200);
  });

  it("records a token's last use at the clock's instant", async () => {
    const account = await createAccount(cp.db.sql);
    const usedAt = clock.now();
    assert.equal((await apiClient(cp.url, account.token)('GET', '/projects')).status, 200);
    // Written in a batch every few seconds.
    const row = await eventually(async () => {
      const [r] = await cp.db.sql<{ last_used_at: Date | null }[]>`
        select last_used_at from api_tokens where user_id = ${account.user_id} and kind = 'api'`;
      return r?.last_used_at ?? undefined;
    }, 'last use written');
    assert.equal(new Date(row).getTime(), usedAt);
  });

  it('judges check results by the clock: a result a day old on it no longer votes', async () => {
    const account = await createAccount(cp.db.sql);
    const api = apiClient(cp.url, account.token);
    const m = (await api('POST', '/monitors', { name: 'Shop', url: 'https://shop.example', project_id: account.project_id })).body.data;
    const result = (at: number): CheckResult => ({
      monitor_id: m.id,
      region: 'local',
      agent_id: 'agent-local',
      scheduled_at: new Date(at).toISOString(),
      checked_at: new Date(at).toISOString(),
      ok: false,
      status_code: 503,
      timings: { dns: 1, connect: 2, tls: 0, ttfb: 5, total: 9 },
      error: { class: 'status', message: 'Unexpected status 503' },
      attempts: 2,
    });
    const publish = (r: CheckResult) => publishJson(cp.nats.nc, cp.nats.names.subjects.result(r.region, r.monitor_id), r, resultMsgId(r));
    const stored = async (n: number) => (await cp.db.sql`select 1 from check_results where monitor_id = ${m.id}`).length === n;
    // Read from the database: this token may make two API requests a minute.
    const status = async () => (await cp.db.sql<{ status: number }[]>`select status from monitors where id = ${m.id}`)[0]!.status;

    // Fresh by the wall clock, a day old by the process's clock: stored, but no vote.
    await publish(result(Date.now()));
    await eventually(() => stored(1), 'the old result stored');
    assert.equal(await status(), 0);

    await publish(result(clock.now()));
    await eventually(() => stored(2), 'the current result stored');
    assert.equal(await status(), 2);
  });
});
