import type { DomainEvent } from '../../../shared/src/contracts/events.ts';
import type { Ping } from '../../../shared/src/contracts/pings.ts';
import type { Sql } from '../db/sql.ts';
import { recordEvents } from '../events/outbox.ts';
import { heartbeatEvent } from '../heartbeats/events.ts';
import { stateColumns, stateOf, unchanged, type StateColumns } from '../heartbeats/record.ts';
import { deadlineOf, nextState } from '../heartbeats/state.ts';
import { insertPings, trimPings } from '../pings/repo.ts';
import { lockHeartbeats, writeStates } from './repo.ts';

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
  /** When a tick next changes the heartbeat; null when none can (paused, down, unwatched). */
  deadline: Date | null;
  events: DomainEvent[];
}

/**
 * One step of each actor, in one transaction: lock the rows, log the pings (a ping whose id is
 * logged already is a redelivery and stops there), apply the rules to the stored state, write
 * the transitions with their events. The row locks are the claim: the API takes the same lock,
 * so whichever writer comes second computes from the first one's result and never repeats its
 * events. The caller acknowledges pings and publishes events only after this has committed.
 */
export function runSteps(sql: Sql, inputs: readonly StepInput[], now: Date): Promise<StepOutcome[]> {
  return sql.begin(async (tx) => {
    const rows = new Map((await lockHeartbeats(tx, inputs.map((i) => i.id))).map((r) => [r.id, r]));
    const pings = inputs.flatMap((i) => (i.ping && rows.has(i.id) ? [i.ping.ping] : []));
    const logged = await insertPings(tx, pings);
    const writes: (StateColumns & { id: string })[] = [];
    const outcomes: StepOutcome[] = [];
    const raised: { outcome: StepOutcome; event: Omit<DomainEvent, 'id'> }[] = [];
    for (const { id, ping } of inputs) {
      const row = rows.get(id);
      if (!row) {
        outcomes.push({ id, projectId: null, duplicate: false, deadline: null, events: [] });
        continue;
      }
      const before = stateOf(row);
      if (ping && !logged.has(ping.ping.id)) {
        outcomes.push({ id, projectId: row.project_id, duplicate: true, deadline: deadlineOf(before), events: [] });
        continue;
      }
      const input = ping ? { type: 'ping' as const, kind: ping.ping.kind, at: ping.at } : { type: 'tick' as const };
      const { state, effects } = nextState(before, input, now);
      if (!unchanged(before, state)) writes.push({ id, ...stateColumns(row, before, state) });
      const about = ping && { kind: ping.ping.kind, exit_code: ping.ping.exit_code, region: ping.ping.region };
      const outcome: StepOutcome = { id, projectId: row.project_id, duplicate: false, deadline: effects.deadline, events: [] };
      for (const e of effects.events) raised.push({ outcome, event: heartbeatEvent(row, e, before, state, about) });
      outcomes.push(outcome);
    }
    await writeStates(tx, writes);
    const recorded = await recordEvents(tx, raised.map((r) => r.event));
    raised.forEach((r, i) => r.outcome.events.push(recorded[i]!));
    await trimPings(tx, [...new Set(pings.map((p) => p.heartbeat_id))]);
    return outcomes;
  });
}
