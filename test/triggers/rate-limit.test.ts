import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSql, type Db, type Sql } from '../../control-plane/src/platform/db/sql.ts';
import { startControlPlane, type RunningControlPlane } from '../../control-plane/src/runtime/control-plane.ts';
import { countFire } from '../../control-plane/src/triggers/repo.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';
import { eventually } from '../harness/streams.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

/**
 * The rate limit of a notify URL under real concurrency: two control-plane processes over one
 * database, each with a pool as large as the default, and hundreds of calls in flight at once.
 */
describe('trigger rate limits under concurrency', () => {
  let cp: TestControlPlane;
  let pool: Sql;
  /** The test's own connections, apart from the pools the control planes wait in. */
  let own: Sql;
  let second: RunningControlPlane;
  let ada: TestAccount;
  let api: Call;

  const trigger = async (extra: Record<string, unknown> = {}) => {
    const t = (await api('POST', '/triggers', { project_id: ada.project_id, name: 'Deploys', default_message: 'Deployed', ...extra })).body
      .data;
    return { id: t.id as string, urls: [`${cp.url}/api/notify/${t.id}`, `${second.url}/api/notify/${t.id}`] };
  };
  /** `n` calls at once, alternating between the two processes. */
  const burst = (urls: string[], n: number) =>
    Promise.all(
      Array.from({ length: n }, (_, i) =>
        fetch(urls[i % urls.length]!).then(async (res) => {
          await res.arrayBuffer();
          return { status: res.status, retryAfter: res.headers.get('retry-after') };
        }),
      ),
    );
  const dbSecond = async (db: Db = own) =>
    (await db<{ s: string }[]>`select floor(extract(epoch from clock_timestamp()))::bigint::text as s`)[0]!.s;
  const waitingForRow = async () =>
    (
      await own<
        { n: number }[]
      >`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`
    )[0]!.n;
  const counters = async (id: string) =>
    (await api('GET', `/triggers/${id}`)).body.data as { fire_count: number; last_fired_at: string | null };
  const lastIsNewest = async (id: string) =>
    (
      await own<{ same: boolean }[]>`
      select (select last_fired_at from triggers where id = ${id}) = (select max(fired_at) from trigger_events where trigger_id = ${id}) as same`
    )[0]!.same;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    pool = createSql(cp.db.url, { log: quietLog, max: 10 });
    second = await startControlPlane({ config: cp.config, log: quietLog, sql: pool, nc: cp.nats.nc, roles: ['api'], port: 0 });
    own = createSql(cp.db.url, { log: quietLog, max: 3 });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
  });
  after(async () => {
    await second.stop();
    await pool.end();
    await own.end();
    await cp.stop();
  });

  it('never accepts more than max calls a second when calls started in one second are decided in the next', async () => {
    const t = await trigger({ rate_limit: { max: 10, per: 'second' } });
    let first = 0;
    let running!: ReturnType<typeof burst>;
    // Hold the trigger's row while the burst starts, so that calls begun in one second wait into
    // the next one: the order a loaded database may serve them in, made certain.
    await own.begin(async (tx) => {
      const { started } = (await tx<{ started: string }[]>`select now()::text as started from triggers where id = ${t.id} for update`)[0]!;
      running = burst(t.urls, 200);
      await eventually(async () => (await waitingForRow()) >= 10, 'calls waiting for the trigger');
      await tx`select pg_sleep(extract(epoch from date_trunc('second', ${started}::timestamptz) + interval '1 second' - clock_timestamp()))`;
      first = Number(await dbSecond(tx));
    });
    const answers = await running;
    const last = Number(await dbSecond());
    const accepted = answers.filter((a) => a.status === 202).length;
    assert.equal(accepted + answers.filter((a) => a.status === 429).length, 200);
    for (const a of answers) if (a.status === 429) assert.equal(a.retryAfter, '1');

    const perSecond = await own<{ second: string; n: number }[]>`
      select date_trunc('second', fired_at)::text as second, count(*)::int as n from trigger_events where trigger_id = ${t.id} group by 1`;
    for (const w of perSecond) assert.ok(w.n <= 10, `${w.n} calls counted in the second ${w.second}`);
    // Every call was decided after the row was let go: in so many calendar seconds, at most 10 each.
    const seconds = last - first + 1;
    assert.ok(accepted >= 10 && accepted <= 10 * seconds, `${accepted} accepted in ${seconds} calendar second(s)`);
    assert.equal((await counters(t.id)).fire_count, accepted);
  });

  it('accepts exactly max of 200 concurrent calls inside one window, and all of fewer calls than max', async () => {
    // A burst inside one window: a day's, unless the day is about to turn (then wait for it to).
    const { left } = (
      await own<{ left: number }[]>`
      select extract(epoch from date_trunc('day', clock_timestamp(), 'UTC') + interval '1 day' - clock_timestamp())::float8 as left`
    )[0]!;
    if (left < 30) await own`select pg_sleep(${left + 0.01})`;
    for (const [max, calls] of [
      [10, 200],
      [50, 30],
    ] as const) {
      const t = await trigger({ rate_limit: { max, per: 'day' } });
      const answers = await burst(t.urls, calls);
      assert.equal(answers.filter((a) => a.status === 202).length, Math.min(max, calls), `max ${max}, ${calls} calls`);
      assert.equal(answers.filter((a) => a.status === 429).length, Math.max(0, calls - max));
      assert.equal((await counters(t.id)).fire_count, Math.min(max, calls));
    }
  });

  it("counts a call that waited behind a later second's calls in that later second, never in its own stale one", async () => {
    const t = await trigger({ rate_limit: { max: 3, per: 'second' } });
    const late = await own.begin(async (tx) => {
      // This transaction starts now; its call is counted only after the next second has filled up.
      const { started } = (await tx<{ started: string }[]>`select now()::text as started`)[0]!;
      await own`select pg_sleep(extract(epoch from date_trunc('second', ${started}::timestamptz) + interval '1 second' - clock_timestamp()))`;
      const answers = await burst(t.urls.slice(0, 1), 3);
      assert.deepEqual(
        answers.map((a) => a.status),
        [202, 202, 202],
      );
      return countFire(tx, t.id);
    });
    assert.equal(late, undefined, 'the fourth call decided in a second already holding three is refused');
    assert.equal((await counters(t.id)).fire_count, 3);
  });

  it('keeps last_fired_at at the newest fire when an older transaction commits last', async () => {
    const t = await trigger();
    let newest = '';
    await own.begin(async (tx) => {
      // Started before the call below, committed after it.
      await tx`select now()`;
      assert.equal((await fetch(t.urls[0]!)).status, 202);
      newest = (await counters(t.id)).last_fired_at!;
      assert.ok(await countFire(tx, t.id));
    });
    const { last_fired_at, fire_count } = await counters(t.id);
    assert.equal(fire_count, 2);
    assert.ok(last_fired_at! > newest, `last_fired_at ${last_fired_at} went back from ${newest}`);
  });

  it('leaves last_fired_at at the newest of 200 concurrent fires', async () => {
    const t = await trigger();
    await burst(t.urls, 200);
    assert.equal((await counters(t.id)).fire_count, 200);
    assert.ok(await lastIsNewest(t.id));
  });
});
