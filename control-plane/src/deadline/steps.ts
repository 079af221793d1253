import type { DomainEvent } from '../../../shared/src/contracts/events.ts';
import type { Ping } from '../../../shared/src/contracts/pings.ts';
import type { Sql } from '../db/sql.ts';
import { together, type Statement } from '../db/sql.ts';
import { eventsInsert } from '../events/outbox.ts';
import { heartbeatEvent } from '../heartbeats/events.ts';
import { stateColumns, stateOf, unchanged, type StateColumns } from '../heartbeats/record.ts';
import { mergeLatePing, snapshotOf } from '../heartbeats/history.ts';
import type { HeartbeatRecord } from '../heartbeats/repo.ts';
import { deadlineOf, isNewPing, nextState, type HeartbeatState, type Transition } from '../heartbeats/state.ts';
import { insertPings, pingHistory, pingsTrim, writeSnapshots } from '../pings/repo.ts';
import { lockHeartbeats, statesUpdate } from './repo.ts';

export interface StepInput {
  id: string;
  /** The ping to apply, at the stream's timestamp; without one the step is a tick. */
  ping?: { ping: Ping; at: Date };
}

export interface StepOutcome {
  id: string;
  /** The heartbeat's project; null when the heartbeat no longer exists. */
  projectId: string | null;
  /** The ping was logged before (a redelivery): nothing changed. */
  duplicate: boolean;
  /** The ping was new but earlier than pings already applied: merged into the history (history.ts). */
  late?: { merged: boolean; alerts: number };
  /** When a tick next changes the heartbeat; null when none can (paused, down, unwatched). */
  deadline: Date | null;
  events: DomainEvent[];
}

/** A step before the ping log has said which pings are new; `row` undefined: the heartbeat is gone. */
type Planned =
  | { id: string; ping: StepInput['ping']; row: undefined }
  | ({ id: string; ping: StepInput['ping']; row: HeartbeatRecord; before: HeartbeatState; late: boolean } & Transition);

/**
 * One step of each actor, in one transaction: lock the rows, apply the rules to the stored state,
 * log the pings with the state after each (a ping whose id is logged already is a redelivery:
 * its step changes nothing), write the transitions with their events. A ping new to the log but
 * earlier than pings already applied is merged into the heartbeat's history (history.ts). The
 * row locks are the claim: the API takes the same lock, so whichever writer comes second
 * computes from the first one's result and never repeats its events. The caller acknowledges
 * pings and publishes events only after this has committed.
 */
export function runSteps(sql: Sql, inputs: readonly StepInput[], now: Date): Promise<StepOutcome[]> {
  return sql.begin(async (tx) => {
    const rows = new Map((await lockHeartbeats(tx, inputs.map((i) => i.id))).map((r) => [r.id, r]));
    const planned = inputs.map(({ id, ping }): Planned => {
      const row = rows.get(id);
      if (!row) return { id, ping, row: undefined };
      const before = stateOf(row);
      const late = ping !== undefined && !isNewPing(before, ping.ping.kind, ping.at);
      const input = ping ? { type: 'ping' as const, kind: ping.ping.kind, at: ping.at } : { type: 'tick' as const };
      return { id, ping, row, before, late, ...nextState(before, input, now) };
    });
    const logged = await insertPings(
      tx,
      planned.flatMap((p) => (p.ping && p.row ? [{ ping: p.ping.ping, at: p.ping.at, after: p.late ? null : snapshotOf(p.state) }] : [])),
    );
    const writes: (StateColumns & { id: string })[] = [];
    const outcomes: StepOutcome[] = [];
    const raised: { outcome: StepOutcome; event: Omit<DomainEvent, 'id'> }[] = [];
    for (const p of planned) {
      const { id, ping, row } = p;
      if (!row) {
        outcomes.push({ id, projectId: null, duplicate: false, deadline: null, events: [] });
        continue;
      }
      if (ping && !logged.has(ping.ping.id)) {
        outcomes.push({ id, projectId: row.project_id, duplicate: true, deadline: deadlineOf(p.before), events: [] });
        continue;
      }
      let { state, effects } = p;
      let late: StepOutcome['late'];
      if (ping && p.late) {
        const merged = mergeLatePing(p.before, await pingHistory(tx, id, ping.ping.id), { id: ping.ping.id, kind: ping.ping.kind, at: ping.at }, now);
        if (merged) {
          await writeSnapshots(tx, merged.snapshots);
          state = merged.state;
          effects = { events: merged.events, deadline: deadlineOf(merged.state) };
        }
        late = { merged: merged !== null, alerts: merged?.events.length ?? 0 };
      }
      if (!unchanged(p.before, state)) writes.push({ id, ...stateColumns(row, p.before, state) });
      const about = ping && { kind: ping.ping.kind, exit_code: ping.ping.exit_code, region: ping.ping.region };
      const outcome: StepOutcome = { id, projectId: row.project_id, duplicate: false, deadline: effects.deadline, events: [], ...(late ? { late } : {}) };
      for (const e of effects.events) raised.push({ outcome, event: heartbeatEvent(row, e, p.before, state, about) });
      outcomes.push(outcome);
    }
    // The states, the events and the ping log's trim in one statement: a round trip less per batch.
    const statements: Statement[] = [];
    if (writes.length > 0) statements.push(statesUpdate(tx, writes));
    if (raised.length > 0) {
      const recorded = eventsInsert(tx, raised.map((r) => r.event));
      raised.forEach((r, i) => r.outcome.events.push(recorded.events[i]!));
      statements.push(recorded.statement);
    }
    const pinged = [...new Set(planned.flatMap((p) => (p.ping && p.row ? [p.id] : [])))];
    if (pinged.length > 0) statements.push(pingsTrim(tx, pinged));
    await together(tx, statements);
    return outcomes;
  });
}
