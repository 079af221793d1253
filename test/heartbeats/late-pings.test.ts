import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { runSteps } from '../../control-plane/src/heartbeats/deadline/steps.ts';
import { mergeLatePing, snapshotOf, type LoggedPing } from '../../control-plane/src/heartbeats/history.ts';
import { nextState, type HeartbeatState, type PingKind } from '../../control-plane/src/heartbeats/state.ts';
import type { Ping } from '../../shared/src/contracts/pings.ts';
import { successPing } from '../../bench/lib/publish.ts';
import { createTestDatabase, type TestDatabase } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

// T0 = 2026-03-10T12:00:00Z; t(s) is that many seconds later. Period 1 h, grace 60 s: nothing is
// missed between pings a few seconds apart.
const T0 = Date.parse('2026-03-10T12:00:00.000Z');
const t = (seconds: number): Date => new Date(T0 + seconds * 1000);
const base: HeartbeatState = {
  status: 'new',
  next_ping_at: null,
  last_ping_at: null,
  last_ping_kind: null,
  started_at: null,
  down_since: null,
  grace_period: 60,
  cron_schedule: null,
  timezone: 'UTC',
  period: 3600,
  active: true,
  runs: [],
  last_success_at: null,
  failed_runs: 0,
  max_duration: null,
  min_duration: null,
  too_frequent_ratio: null,
  alert_after_failures: 1,
};

/** Applies pings in order as the actors do, logging each with the state after it. */
function applyInOrder(pings: readonly { kind: PingKind; at: Date }[]): { state: HeartbeatState; log: LoggedPing[]; alerts: string[] } {
  let state = base;
  const log: LoggedPing[] = [];
  const alerts: string[] = [];
  for (const p of pings) {
    const next = nextState(state, { type: 'ping', kind: p.kind, at: p.at }, p.at);
    state = next.state;
    alerts.push(
      ...next.effects.events
        .filter((e) => e.type !== 'heartbeat.started' && e.type !== 'heartbeat.late')
        .map((e) => `${e.type}@${e.at.getTime() - T0}`),
    );
    log.push({ id: randomUUID(), kind: p.kind, at: p.at, after: snapshotOf(state) });
  }
  return { state, log, alerts };
}

const summary = (events: readonly { type: string; at: Date }[]) => events.map((e) => `${e.type}@${e.at.getTime() - T0}`);

describe('a ping that arrives after later pings were applied', () => {
  it('owes the down and the up of a failure between two successes', () => {
    const applied = applyInOrder([
      { kind: 'success', at: t(1) },
      { kind: 'success', at: t(3) },
    ]);
    const merged = mergeLatePing(applied.state, applied.log, { id: randomUUID(), kind: 'fail', at: t(2) }, t(4));
    assert.ok(merged);
    assert.deepEqual(summary(merged.events), ['heartbeat.down@2000', 'heartbeat.up@3000']);
    assert.equal(merged.state.status, 'up');
    assert.equal(merged.state.down_since, null);
    assert.deepEqual(
      merged.snapshots.map((s) => s.after.status),
      ['down', 'up'],
      'the late ping and the one after it carry the merged history',
    );
  });

  it('owes the up and the next down of a success that splits a down period', () => {
    const applied = applyInOrder([
      { kind: 'fail', at: t(1) },
      { kind: 'fail', at: t(3) },
    ]);
    assert.deepEqual(applied.alerts, ['heartbeat.down@1000']);
    const merged = mergeLatePing(applied.state, applied.log, { id: randomUUID(), kind: 'success', at: t(2) }, t(4));
    assert.deepEqual(summary(merged!.events), ['heartbeat.up@2000', 'heartbeat.down@3000']);
    assert.equal(merged!.state.status, 'down');
    assert.equal(merged!.state.down_since?.getTime(), t(3).getTime(), 'the open period starts with the later failure');
  });

  it('owes nothing when the late ping only moves where a down period starts', () => {
    const applied = applyInOrder([
      { kind: 'success', at: t(1) },
      { kind: 'fail', at: t(3) },
    ]);
    const merged = mergeLatePing(applied.state, applied.log, { id: randomUUID(), kind: 'fail', at: t(2) }, t(4));
    assert.deepEqual(merged!.events, []);
    assert.equal(merged!.state.down_since?.getTime(), t(2).getTime());
  });

  it('owes a down, and leaves the period open, for a failure before a run that has not finished', () => {
    const applied = applyInOrder([
      { kind: 'success', at: t(1) },
      { kind: 'start', at: t(3) },
    ]);
    const merged = mergeLatePing(applied.state, applied.log, { id: randomUUID(), kind: 'fail', at: t(2) }, t(4));
    assert.deepEqual(summary(merged!.events), ['heartbeat.down@2000']);
    assert.equal(merged!.state.status, 'running');
    assert.equal(merged!.state.down_since?.getTime(), t(2).getTime(), "the run's success will raise the up");
  });

  it('cannot merge without the state before the ping', () => {
    const applied = applyInOrder([{ kind: 'success', at: t(3) }]);
    assert.equal(mergeLatePing(applied.state, applied.log, { id: randomUUID(), kind: 'fail', at: t(2) }, t(4)), null);
    const unknown = applied.log.map((p) => ({ ...p, after: null }));
    assert.equal(
      mergeLatePing(
        applied.state,
        [{ id: randomUUID(), kind: 'success', at: t(1), after: null }, ...unknown],
        { id: randomUUID(), kind: 'fail', at: t(2) },
        t(4),
      ),
      null,
    );
  });
});

describe('the deadline steps with pings delivered out of order', () => {
  let db: TestDatabase;
  let account: TestAccount;
  before(async () => {
    db = await createTestDatabase();
    account = await createAccount(db.sql);
  });
  after(() => db.drop());

  const createHeartbeat = async () => {
    const [r] = await db.sql<{ id: string }[]>`
      insert into heartbeats (project_id, name, grace_period, period) values (${account.project_id}, 'job', 60, 3600) returning id`;
    return r!.id;
  };
  const ping = (heartbeatId: string, kind: PingKind, at: Date): { ping: Ping; at: Date } => ({
    at,
    ping: { ...successPing(heartbeatId), kind, received_at: at.toISOString(), method: 'POST' },
  });
  const alertsOf = async (id: string) =>
    (
      await db.sql<{ kind: string; at: string }[]>`
        select kind, payload->>'occurred_at' as at from outbox_events
        where payload->'subject'->>'id' = ${id} and kind in ('heartbeat.down', 'heartbeat.up') order by created_at, payload->>'occurred_at'`
    ).map((r) => `${r.kind}@${Date.parse(r.at) - T0}`);

  it('raises, once, the alerts of pings redelivered after later ones, as in stream order', async () => {
    const kinds: PingKind[] = ['success', 'success', 'fail', 'fail', 'success', 'success'];
    const inOrder = await createHeartbeat();
    const reordered = await createHeartbeat();
    const a = kinds.map((k, i) => ping(inOrder, k, t(i)));
    const b = kinds.map((k, i) => ping(reordered, k, t(i)));
    for (const p of a) await runSteps(db.sql, [{ id: inOrder, pings: [p], now: t(10) }]);
    // Both failures lost in flight; the successes after them applied first; then the failures
    // come back, and one of them once more.
    const outcomes = [];
    for (const p of [b[0], b[1], b[4], b[5], b[3], b[2], b[3]])
      outcomes.push(...(await runSteps(db.sql, [{ id: reordered, pings: [p!], now: t(10) }])));
    assert.deepEqual(
      outcomes.map((o) => (o.duplicates > 0 ? 'again' : o.late.pings > 0 ? `late, ${o.late.alerts} alerts` : 'in order')),
      ['in order', 'in order', 'in order', 'in order', 'late, 2 alerts', 'late, 0 alerts', 'again'],
    );

    assert.deepEqual(await alertsOf(inOrder), ['heartbeat.down@2000', 'heartbeat.up@4000']);
    assert.deepEqual(await alertsOf(reordered), ['heartbeat.down@3000', 'heartbeat.up@4000']);
    const [x, y] = await db.sql<{ status: string }[]>`
      select status from heartbeats where id = any(${db.sql.array([inOrder, reordered])}::uuid[])`;
    assert.deepEqual([x!.status, y!.status], ['up', 'up']);
  });

  it('raises as many downs and ups as stream order would, whatever the delivery order and however deliveries are grouped into steps', async () => {
    const delivery = fc.array(fc.constantFrom<PingKind>('success', 'fail', 'start'), { minLength: 2, maxLength: 8 }).chain((kinds) =>
      fc.record({
        kinds: fc.constant(['success' as PingKind, ...kinds]),
        // How many places each ping (but the first, which anchors the history) is delivered late.
        delays: fc.array(fc.nat({ max: 4 }), { minLength: kinds.length, maxLength: kinds.length }),
        again: fc.array(fc.boolean(), { minLength: kinds.length, maxLength: kinds.length }),
        // Where a step ends: the deliveries between two ends are applied together.
        cuts: fc.array(fc.boolean(), { minLength: 2 * kinds.length, maxLength: 2 * kinds.length }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(delivery, async ({ kinds, delays, again, cuts }) => {
        const inOrder = await createHeartbeat();
        const reordered = await createHeartbeat();
        for (const [i, k] of kinds.entries()) await runSteps(db.sql, [{ id: inOrder, pings: [ping(inOrder, k, t(i))], now: t(30) }]);
        const pings = kinds.map((k, i) => ping(reordered, k, t(i)));
        const order = pings
          .map((p, i) => ({ p, key: i === 0 ? -1 : i + delays[i - 1]! + 0.5 }))
          .sort((x, y) => x.key - y.key)
          .flatMap(({ p }, i) => (i > 0 && again[i - 1] ? [p, p] : [p]));
        const steps: (typeof order)[] = [[]];
        for (const [i, p] of order.entries()) {
          steps.at(-1)!.push(p);
          if (cuts[i]) steps.push([]);
        }
        for (const group of steps) if (group.length > 0) await runSteps(db.sql, [{ id: reordered, pings: group, now: t(30) }]);
        const expected = await alertsOf(inOrder);
        const got = await alertsOf(reordered);
        const count = (xs: string[], type: string) => xs.filter((x) => x.startsWith(type)).length;
        assert.equal(count(got, 'heartbeat.down@'), count(expected, 'heartbeat.down@'), `downs: ${got} vs ${expected}`);
        assert.equal(count(got, 'heartbeat.up@'), count(expected, 'heartbeat.up@'), `ups: ${got} vs ${expected}`);
        const rows = await db.sql<{ id: string; status: string; down: boolean }[]>`
          select id, status, down_since is not null as down from heartbeats where id = any(${db.sql.array([inOrder, reordered])}::uuid[])`;
        const byId = new Map(rows.map((r) => [r.id, r]));
        assert.deepEqual(
          { status: byId.get(reordered)!.status, down: byId.get(reordered)!.down },
          { status: byId.get(inOrder)!.status, down: byId.get(inOrder)!.down },
          'the same state in the end',
        );
      }),
      { numRuns: 60 },
    );
  });
});
