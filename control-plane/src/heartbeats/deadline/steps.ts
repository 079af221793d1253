import type { DomainEvent } from '../../../../shared/src/contracts/events.ts';
import type { Ping } from '../../../../shared/src/contracts/pings.ts';
import type { Sql } from '../../platform/db/sql.ts';
import { together, type Statement } from '../../platform/db/sql.ts';
import { eventsInsert } from '../../platform/outbox.ts';
import { heartbeatEvent } from '../events.ts';
import { contentSettingsOf, stateColumns, stateOf, unchanged, type StateColumns } from '../record.ts';
import { judgeContent } from '../output.ts';
import { mergeLatePing } from '../history.ts';
import type { HeartbeatRecord } from '../repo.ts';
import { applyPings, type Sequence, type SequencePing } from '../sequence.ts';
import { deadlineOf, type HeartbeatEvent, type HeartbeatState, type PingJudgement } from '../state.ts';
import { insertPings, PING_LOG_SIZE, pingHistory, pingsTrim, writeSnapshots, type PingEntry } from '../pings/repo.ts';
import { lockHeartbeats, statesUpdate } from './repo.ts';

export interface StepPing {
  ping: Ping;
  /** The stream's timestamp. */
  at: Date;
}

export interface StepInput {
  id: string;
  /** The pings to apply, in the stream's order; none: the step is a tick. */
  pings: readonly StepPing[];
  /**
   * The clock of the step: misses are judged up to this instant and no further. The caller makes
   * it no later than the instant up to which it holds every ping of the heartbeat.
   */
  now: Date;
}

export interface StepOutcome {
  id: string;
  /** The heartbeat's project; null when the heartbeat no longer exists. */
  projectId: string | null;
  /** Pings logged before (redeliveries): they changed nothing. */
  duplicates: number;
  /** Pings new to the log but earlier than pings already applied: merged into the history (history.ts). */
  late: { pings: number; merged: number; alerts: number };
  /** When a tick next changes the heartbeat; null when none can (paused, down, unwatched). */
  deadline: Date | null;
  events: DomainEvent[];
}

interface Raised {
  event: HeartbeatEvent;
  before: HeartbeatState;
  after: HeartbeatState;
  ping: StepPing | undefined;
  /** How the rules judged the ping that raised it. */
  judgement?: PingJudgement | null;
}

/** A step once the rules ran over its pings; `row` undefined: the heartbeat is gone. */
type Planned = { input: StepInput; row: undefined } | { input: StepInput; row: HeartbeatRecord; before: HeartbeatState; seq: Sequence };

/** A ping as the rules take it: its kind as its content makes it (exit codes, output rules), its run id. */
function sequencePing(row: HeartbeatRecord, p: StepPing): SequencePing {
  const content = judgeContent(contentSettingsOf(row), p.ping);
  return { kind: content.kind, at: p.at, rid: p.ping.rid ?? null, reason: content.reason };
}

const plan = (row: HeartbeatRecord, input: StepInput, pings: readonly StepPing[] = input.pings): Sequence =>
  applyPings(
    stateOf(row),
    pings.map((p) => sequencePing(row, p)),
    input.now,
  );

/**
 * One step of each actor, in one transaction: lock the rows, apply the rules to the stored state
 * over the step's pings (sequence.ts), log the pings with the state after each (a ping whose id
 * is logged already is a redelivery and changes nothing), write the transitions with their
 * events. A ping new to the log but earlier than pings already applied is merged into the
 * heartbeat's history (history.ts). The row locks are the claim: the API takes the same lock, so
 * whichever writer comes second computes from the first one's result and never repeats its
 * events. The caller acknowledges pings and publishes events only after this has committed.
 */
export function runSteps(sql: Sql, given: readonly StepInput[]): Promise<StepOutcome[]> {
  // A ping given twice (delivered again under another stream sequence) is applied once.
  const repeats = new Map<string, number>();
  const inputs = given.map((input) => {
    const seen = new Set<string>();
    const pings = input.pings.filter((x) => !seen.has(x.ping.id) && seen.add(x.ping.id));
    if (pings.length < input.pings.length) repeats.set(input.id, input.pings.length - pings.length);
    return pings.length < input.pings.length ? { ...input, pings } : input;
  });
  return sql.begin(async (tx) => {
    const rows = new Map(
      (
        await lockHeartbeats(
          tx,
          inputs.map((i) => i.id),
        )
      ).map((r) => [r.id, r]),
    );
    const planned = inputs.map((input): Planned => {
      const row = rows.get(input.id);
      return row ? { input, row, before: stateOf(row), seq: plan(row, input) } : { input, row: undefined };
    });
    const entries: PingEntry[] = [];
    // Pings applied in order that the log's trim at the end of this step would delete at once
    // (more than PING_LOG_SIZE of one heartbeat in one step, a job in a loop) are not written:
    // the log ends the same. A ping applied in order is never one logged before.
    const passed = new Set<string>();
    for (const p of planned) {
      if (!p.row) continue;
      const oldestKept = p.input.pings.length - PING_LOG_SIZE;
      p.input.pings.forEach((x, i) => {
        const after = p.seq.after[i] ?? null;
        if (i < oldestKept && after !== null) passed.add(x.ping.id);
        else entries.push({ ping: x.ping, at: x.at, after, judgement: p.seq.judgements[i] ?? null });
      });
    }
    const inserted = await insertPings(tx, entries);
    const logged = { has: (id: string) => inserted.has(id) || passed.has(id) };

    const writes: (StateColumns & { id: string })[] = [];
    const outcomes: StepOutcome[] = [];
    const raised: { outcome: StepOutcome; event: Omit<DomainEvent, 'id'> }[] = [];
    for (const p of planned) {
      const { input, row } = p;
      const late = { pings: 0, merged: 0, alerts: 0 };
      if (!row) {
        outcomes.push({ id: input.id, projectId: null, duplicates: 0, late, deadline: null, events: [] });
        continue;
      }
      const fresh = input.pings.filter((x) => logged.has(x.ping.id));
      let { seq } = p;
      const skipped = new Set(seq.skipped);
      // A ping planned as new that was logged already (rare: a redelivery the state did not
      // show) changes nothing: plan again without it, and store the states the others get.
      if (input.pings.some((x, i) => !skipped.has(i) && !logged.has(x.ping.id))) {
        seq = plan(row, input, fresh);
        await writeSnapshots(
          tx,
          fresh.flatMap((x, i) => (seq.after[i] ? [{ id: x.ping.id, after: seq.after[i]!, judgement: seq.judgements[i] ?? null }] : [])),
        );
      }
      const pingsOfSeq = seq === p.seq ? input.pings : fresh;
      const events: Raised[] = seq.events.map((e) => ({
        ...e,
        ping: e.ping === null ? undefined : pingsOfSeq[e.ping],
        judgement: e.ping === null ? null : seq.judgements[e.ping],
      }));
      let state = seq.state;
      // Late pings are merged one at a time, each into the history as it stands: the step's
      // other late pings are logged already but not yet part of it.
      const unmerged = seq.skipped.map((i) => pingsOfSeq[i]!).filter((x) => logged.has(x.ping.id));
      while (unmerged.length > 0) {
        const x = unmerged[0]!;
        late.pings++;
        const history = await pingHistory(
          tx,
          input.id,
          contentSettingsOf(row),
          unmerged.map((u) => u.ping.id),
        );
        unmerged.shift();
        const merged = mergeLatePing(state, history, { id: x.ping.id, ...sequencePing(row, x) }, input.now);
        if (!merged) continue;
        late.merged++;
        late.alerts += merged.events.length;
        await writeSnapshots(tx, merged.snapshots);
        for (const event of merged.events) events.push({ event, before: state, after: merged.state, ping: x });
        state = merged.state;
      }
      if (!unchanged(p.before, state)) writes.push({ id: input.id, ...stateColumns(row, p.before, state) });
      const outcome: StepOutcome = {
        id: input.id,
        projectId: row.project_id,
        duplicates: input.pings.length - fresh.length + (repeats.get(input.id) ?? 0),
        late,
        deadline: deadlineOf(state),
        events: [],
      };
      for (const e of events) {
        const about = e.ping && {
          kind: e.ping.ping.kind,
          exit_code: e.ping.ping.exit_code,
          region: e.ping.ping.region,
          ...(e.ping.ping.rid ? { rid: e.ping.ping.rid } : {}),
          ...(e.judgement?.duration_ms != null ? { run_duration_seconds: e.judgement.duration_ms / 1000 } : {}),
        };
        raised.push({ outcome, event: heartbeatEvent(row, e.event, e.before, e.after, about) });
      }
      outcomes.push(outcome);
    }
    // The states, the events and the ping log's trim in one statement: a round trip less per batch.
    const statements: Statement[] = [];
    if (writes.length > 0) statements.push(statesUpdate(tx, writes));
    if (raised.length > 0) {
      const recorded = eventsInsert(
        tx,
        raised.map((r) => r.event),
      );
      raised.forEach((r, i) => r.outcome.events.push(recorded.events[i]!));
      statements.push(...recorded.statements);
    }
    const pinged = [...new Set(planned.flatMap((p) => (p.row && p.input.pings.length > 0 ? [p.input.id] : [])))];
    if (pinged.length > 0) statements.push(pingsTrim(tx, pinged));
    await together(tx, statements);
    return outcomes;
  });
}
