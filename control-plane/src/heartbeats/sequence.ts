/**
 * A run of a heartbeat's pings applied in one step: the deadline actors take every ping queued
 * for a heartbeat at once, so a job that calls its ping URL in a loop costs one step per batch,
 * not one per ping, and cannot hold back other heartbeats.
 *
 * Each ping is judged at its own instant (the stream's timestamp): the clock is applied at the
 * ping's instant before the ping itself (never later than `now`), so a miss between two pings
 * happens as it did, and a miss that a ping answers never happens. The clock reaches `now` only
 * after the last ping;
 * the caller passes as `now` no later than the instant up to which it knows every ping of the
 * heartbeat (see deadline/partition-clock.ts), so a ping still queued is never taken for a miss.
 *
 * Pings that are not new to the state they meet (an instant before the last applied ping: a
 * redelivery or a ping that arrived late) are left out and reported by index; the caller tells
 * the two apart by the ping log and merges a late one into the history (history.ts). A ping of
 * the kind last applied, in the same millisecond, is a repeat: logged, changing nothing.
 */
import { snapshotOf, type Snapshot } from './history.ts';
import { isNewPing, nextState, type HeartbeatEvent, type HeartbeatState, type PingJudgement, type PingKind } from './state.ts';

export interface SequencePing {
  /** As its content makes it (output.ts). */
  kind: PingKind;
  at: Date;
  rid?: string | null;
  reason?: 'output' | null;
}

/** An event with the states around it and the ping that caused it (an index into the pings), if any. */
export interface SequenceEvent {
  event: HeartbeatEvent;
  before: HeartbeatState;
  after: HeartbeatState;
  ping: number | null;
}

export interface Sequence {
  state: HeartbeatState;
  events: SequenceEvent[];
  /** The state right after each ping; null for a ping that was not new (see `skipped`). */
  after: (Snapshot | null)[];
  /** How the rules judged each ping; null for one that was not applied (a repeat or not new). */
  judgements: (PingJudgement | null)[];
  /** Indexes of the pings that were not new to the state they met, in order. */
  skipped: number[];
}

export function applyPings(start: HeartbeatState, pings: readonly SequencePing[], now: Date): Sequence {
  let state = start;
  const events: SequenceEvent[] = [];
  const after: (Snapshot | null)[] = [];
  const judgements: (PingJudgement | null)[] = [];
  const skipped: number[] = [];
  const step = (input: Parameters<typeof nextState>[1], at: Date, ping: number | null) => {
    const before = state;
    const t = nextState(before, input, at);
    state = t.state;
    for (const event of t.effects.events) events.push({ event, before, after: state, ping });
    return t.effects.judgement ?? null;
  };
  for (const [i, p] of pings.entries()) {
    if (repeats(state, p)) {
      // A ping of the same kind in the same millisecond as the last one applied (a job in a
      // loop): the stream delivered it after that one, and it would change nothing.
      after.push(snapshotOf(state));
      judgements.push(null);
      continue;
    }
    if (!isNewPing(state, p.kind, p.at)) {
      after.push(null);
      judgements.push(null);
      skipped.push(i);
      continue;
    }
    const at = p.at.getTime() <= now.getTime() ? p.at : now;
    step({ type: 'tick' }, at, null);
    judgements.push(step({ type: 'ping', kind: p.kind, at: p.at, rid: p.rid ?? null, reason: p.reason ?? null }, at, i));
    after.push(snapshotOf(state));
  }
  step({ type: 'tick' }, now, null);
  return { state, events, after, judgements, skipped };
}

function repeats(state: HeartbeatState, p: SequencePing): boolean {
  return state.last_ping_kind === p.kind && state.last_ping_at !== null && state.last_ping_at.getTime() === p.at.getTime();
}
