import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  incidentChanges,
  incidentEvent,
  type AppliedChange,
  type EventMonitor,
  type IncidentChange,
} from '../../control-plane/src/monitors/incidents/rules.ts';
import {
  evaluateMonitor,
  noStreak,
  staleAfter,
  type Evaluation,
  type RegionVote,
  type Streak,
} from '../../control-plane/src/monitors/status.ts';

// T0 = 2026-11-21T12:00:00Z is `now`; ago(s, ms) is that long before it.
const T0 = Date.parse('2026-11-21T12:00:00.000Z');
const ago = (seconds: number, ms = 0): Date => new Date(T0 - seconds * 1000 - ms);
const iso = (d: Date): string => d.toISOString();
const now = new Date(T0);

const vote = (region: string, ok: boolean, age: number, error: string | null = ok ? null : 'timeout'): RegionVote => ({
  region,
  ok,
  scheduledAt: ago(age),
  error,
});
/** An evaluation as the status rule returns it; the rule under test reads only these fields. */
const evaluation = (
  transition: Evaluation['transition'],
  voting: string[],
  failing: string[],
  cause = '',
  streak = noStreak,
): Evaluation => ({
  status: transition === 'down' ? 2 : 1,
  transition,
  voting,
  failing,
  abstained: [],
  required: 1,
  cause,
  streak,
});

/**
 * The streak the status rule gives a first round: its slot is the newest voting check. Rows that
 * leave the streak out get this one, as the status rule would have made it from their votes.
 */
function firstRound(e: Evaluation, votes: readonly RegionVote[]): Evaluation {
  if (e.streak !== noStreak) return e;
  let round = 0;
  for (const v of votes) if (e.voting.includes(v.region)) round = Math.max(round, v.scheduledAt.getTime());
  const streak: Streak = { prior: 0, priorSince: 0, dir: e.transition === 'down' ? -1 : 1, round };
  return { ...e, streak: round ? streak : noStreak };
}

/** The changes without the evidence, which rows of their own check. */
const withoutEvidence = (changes: IncidentChange[]) =>
  changes.map((c) => (c.type === 'open' ? { ...c, evidence: undefined } : c)) as Row['expect'];

interface Row {
  name: string;
  evaluation: Evaluation;
  votes: RegionVote[];
  /** Open changes carry `evidence: undefined`: rows of their own check the evidence. */
  expect: (IncidentChange | (Omit<Extract<IncidentChange, { type: 'open' }>, 'evidence'> & { evidence?: undefined }))[];
}

const rows: Row[] = [
  // Down: open an incident.
  {
    name: 'opens an incident when the only region goes down, at that check',
    evaluation: evaluation('down', ['eu'], ['eu'], 'timeout'),
    votes: [vote('eu', false, 10)],
    expect: [{ type: 'open', started_at: iso(ago(10)), cause: 'timeout', regions: ['eu'], evidence: undefined }],
  },
  {
    name: 'opens an incident over several failing regions, with the status rule cause',
    evaluation: evaluation('down', ['ap', 'eu', 'us'], ['eu', 'us'], 'Unexpected status 503'),
    votes: [vote('us', false, 10, 'Unexpected status 503'), vote('eu', false, 30), vote('ap', true, 20)],
    expect: [{ type: 'open', started_at: iso(ago(10)), cause: 'Unexpected status 503', regions: ['eu', 'us'], evidence: undefined }],
  },
  {
    name: 'starts the incident at the newest voting check, even a passing one',
    evaluation: evaluation('down', ['ap', 'eu', 'us'], ['eu', 'us'], 'timeout'),
    votes: [vote('eu', false, 30), vote('us', false, 20), vote('ap', true, 5)],
    expect: [{ type: 'open', started_at: iso(ago(5)), cause: 'timeout', regions: ['eu', 'us'], evidence: undefined }],
  },
  {
    name: 'opens an incident with an empty cause when no failing region gave an error text',
    evaluation: evaluation('down', ['eu', 'us'], ['eu', 'us'], ''),
    votes: [vote('eu', false, 10, null), vote('us', false, 12, '')],
    expect: [{ type: 'open', started_at: iso(ago(10)), cause: '', regions: ['eu', 'us'], evidence: undefined }],
  },
  {
    name: 'keeps the milliseconds of the check that starts the incident',
    evaluation: evaluation('down', ['eu'], ['eu'], 'timeout'),
    votes: [{ ...vote('eu', false, 0), scheduledAt: ago(10, 123) }],
    expect: [{ type: 'open', started_at: '2026-11-21T11:59:49.877Z', cause: 'timeout', regions: ['eu'], evidence: undefined }],
  },

  // Votes outside the voting set, and no votes at all.
  {
    name: 'ignores a newer vote from a region outside the voting set',
    evaluation: evaluation('down', ['eu'], ['eu'], 'timeout'),
    votes: [vote('eu', false, 30), vote('ap', true, 1)],
    expect: [{ type: 'open', started_at: iso(ago(30)), cause: 'timeout', regions: ['eu'], evidence: undefined }],
  },
  {
    name: 'starts the incident now when no vote is given',
    evaluation: evaluation('down', ['eu'], ['eu'], 'timeout'),
    votes: [],
    expect: [{ type: 'open', started_at: iso(now), cause: 'timeout', regions: ['eu'], evidence: undefined }],
  },
  {
    name: 'starts the incident now when every vote is outside the voting set',
    evaluation: evaluation('down', ['eu'], ['eu'], 'timeout'),
    votes: [vote('us', false, 30), vote('ap', false, 20)],
    expect: [{ type: 'open', started_at: iso(now), cause: 'timeout', regions: ['eu'], evidence: undefined }],
  },
  {
    name: 'closes the incident now when no vote is given',
    evaluation: evaluation('up', ['eu'], []),
    votes: [],
    expect: [{ type: 'close', ended_at: iso(now) }],
  },

  // Up: close the open incident.
  {
    name: 'closes the open incident when the monitor comes back up, at that check',
    evaluation: evaluation('up', ['eu'], []),
    votes: [vote('eu', true, 10)],
    expect: [{ type: 'close', ended_at: iso(ago(10)) }],
  },
  {
    name: 'closes at the newest voting check, even a failing one below quorum',
    evaluation: evaluation('up', ['ap', 'eu', 'us'], ['us'], 'timeout'),
    votes: [vote('eu', true, 30), vote('us', false, 4), vote('ap', true, 20)],
    expect: [{ type: 'close', ended_at: iso(ago(4)) }],
  },
  {
    name: 'asks to close on up whether or not an incident is open (the repo finds none: no event)',
    evaluation: evaluation('up', ['eu', 'us'], []),
    votes: [vote('eu', true, 10), vote('us', true, 15)],
    expect: [{ type: 'close', ended_at: iso(ago(10)) }],
  },
  {
    name: 'ignores a newer vote from a region outside the voting set when closing',
    evaluation: evaluation('up', ['eu'], []),
    votes: [vote('eu', true, 30), vote('us', false, 1)],
    expect: [{ type: 'close', ended_at: iso(ago(30)) }],
  },

  // No transition: no change.
  {
    name: 'changes nothing while the monitor stays down',
    evaluation: { ...evaluation(null, ['eu'], ['eu'], 'timeout'), status: 2 },
    votes: [vote('eu', false, 10)],
    expect: [],
  },
  {
    name: 'changes nothing while the monitor stays up with a region failing',
    evaluation: evaluation(null, ['eu', 'us', 'ap'], ['eu'], 'timeout'),
    votes: [vote('eu', false, 10), vote('us', true, 10), vote('ap', true, 10)],
    expect: [],
  },
  {
    name: 'changes nothing when a pending monitor goes up (no incident was open)',
    evaluation: evaluation(null, ['eu'], []),
    votes: [vote('eu', true, 10)],
    expect: [],
  },
  {
    name: 'changes nothing when no region votes',
    evaluation: { ...evaluation(null, [], []), status: 0 },
    votes: [],
    expect: [],
  },
];

describe('incident changes from a monitor evaluation', () => {
  for (const row of rows) {
    it(row.name, () => {
      const changes = incidentChanges({ evaluation: firstRound(row.evaluation, row.votes), votes: row.votes }, now);
      assert.deepEqual(withoutEvidence(changes), row.expect);
    });
  }

  it('takes the clock as a parameter: it dates a change only when no vote does', () => {
    const input = { evaluation: evaluation('down', ['eu'], ['eu'], 'timeout'), votes: [] };
    assert.deepEqual(incidentChanges(input, ago(60)), [
      { type: 'open', started_at: iso(ago(60)), cause: 'timeout', regions: ['eu'], evidence: [] },
    ]);
  });

  it('opens and closes from what the status rule returns, a stale region voting for neither', () => {
    const down = [vote('eu', false, 20, 'Unexpected status 503'), vote('us', false, 40), vote('ap', true, 3600)];
    const e = evaluateMonitor(1, down, now, staleAfter(60));
    assert.deepEqual(withoutEvidence(incidentChanges({ evaluation: e, votes: down }, now)), [
      { type: 'open', started_at: iso(ago(20)), cause: 'Unexpected status 503', regions: ['eu', 'us'], evidence: undefined },
    ]);
    const up = [vote('eu', true, 5), vote('us', true, 2), vote('ap', false, 3600)];
    const back = evaluateMonitor(2, up, now, staleAfter(60));
    assert.deepEqual(incidentChanges({ evaluation: back, votes: up }, now), [{ type: 'close', ended_at: iso(ago(2)) }]);
  });
});

describe('incidents of monitors confirmed over several rounds', () => {
  it('starts the incident at the first failing round of the confirmed run', () => {
    const policy = { quorum: null, confirmDown: 3, confirmUp: 1 };
    let streak: Streak = noStreak;
    let e: Evaluation | undefined;
    for (const age of [120, 60, 0]) {
      e = evaluateMonitor(1, [vote('eu', false, age)], now, staleAfter(60), policy, streak);
      streak = e.streak;
    }
    assert.equal(e!.transition, 'down');
    assert.deepEqual(withoutEvidence(incidentChanges({ evaluation: e!, votes: [vote('eu', false, 0)] }, now)), [
      { type: 'open', started_at: iso(ago(120)), cause: 'timeout', regions: ['eu'], evidence: undefined },
    ]);
  });

  it('ends the incident at the first passing round of the confirmed run', () => {
    const policy = { quorum: null, confirmDown: 1, confirmUp: 2 };
    const first = evaluateMonitor(2, [vote('eu', true, 60)], now, staleAfter(60), policy, noStreak);
    assert.equal(first.transition, null);
    const second = evaluateMonitor(2, [vote('eu', true, 0)], now, staleAfter(60), policy, first.streak);
    assert.equal(second.transition, 'up');
    assert.deepEqual(incidentChanges({ evaluation: second, votes: [vote('eu', true, 0)] }, now), [
      { type: 'close', ended_at: iso(ago(60)) },
    ]);
  });
});

describe('the evidence an incident keeps', () => {
  it('records what each voting and abstaining region saw, in region order, and leaves stale regions out', () => {
    const votes: RegionVote[] = [
      { ...vote('us', false, 10, 'Unexpected status 503'), statusCode: 503, totalMs: 42.5, checkedAt: ago(9) },
      { ...vote('eu', false, 10, 'timeout'), statusCode: null, totalMs: 10_000 },
      { ...vote('ap', false, 10, 'connect ECONNREFUSED'), abstain: true },
      vote('sa', true, 3600),
    ];
    const e = evaluateMonitor(1, votes, now, staleAfter(60));
    assert.equal(e.transition, 'down');
    assert.deepEqual(e.abstained, ['ap']);
    const [open] = incidentChanges({ evaluation: e, votes }, now);
    assert.ok(open?.type === 'open');
    assert.deepEqual(open.evidence, [
      {
        region: 'ap',
        ok: false,
        status_code: null,
        error: 'connect ECONNREFUSED',
        total_ms: null,
        scheduled_at: iso(ago(10)),
        abstained: true,
      },
      { region: 'eu', ok: false, status_code: null, error: 'timeout', total_ms: 10_000, scheduled_at: iso(ago(10)), abstained: false },
      {
        region: 'us',
        ok: false,
        status_code: 503,
        error: 'Unexpected status 503',
        total_ms: 42.5,
        scheduled_at: iso(ago(10)),
        abstained: false,
      },
    ]);
  });
});

const monitor: EventMonitor = {
  id: '8f0b7a8e-0d7e-4a59-9d0a-2a3c1f6f4b11',
  project_id: '2b1e4c55-9a0e-4b0c-8f0e-6a7d9e3c2d10',
  name: 'Shop',
  url: 'https://shop.example/health',
};
const incidentId = 'c2a7d5e1-3f4b-4e6a-9b8c-7d6e5f4a3b21';

interface EventRow {
  name: string;
  monitor: EventMonitor;
  applied: AppliedChange;
  expect: ReturnType<typeof incidentEvent>;
}

const eventRows: EventRow[] = [
  {
    name: 'reports an opened incident as monitor.down at its start',
    monitor,
    applied: {
      type: 'open',
      started_at: iso(ago(10)),
      cause: 'Unexpected status 503',
      regions: ['eu', 'us'],
      incident_id: incidentId,
      evidence: [
        {
          region: 'eu',
          ok: false,
          status_code: 503,
          error: 'Unexpected status 503',
          total_ms: 12,
          scheduled_at: iso(ago(10)),
          abstained: false,
        },
      ],
    },
    expect: {
      kind: 'monitor.down',
      occurred_at: iso(ago(10)),
      project_id: monitor.project_id,
      subject: { type: 'monitor', id: monitor.id, name: 'Shop' },
      data: {
        url: 'https://shop.example/health',
        regions: ['eu', 'us'],
        cause: 'Unexpected status 503',
        incident_id: incidentId,
        started_at: iso(ago(10)),
        evidence: [
          {
            region: 'eu',
            ok: false,
            status_code: 503,
            error: 'Unexpected status 503',
            total_ms: 12,
            scheduled_at: iso(ago(10)),
            abstained: false,
          },
        ],
      },
    },
  },
  {
    name: 'reports an opened incident with no cause as an empty cause',
    monitor,
    applied: { type: 'open', started_at: iso(now), cause: '', regions: ['eu'], incident_id: incidentId, evidence: [] },
    expect: {
      kind: 'monitor.down',
      occurred_at: iso(now),
      project_id: monitor.project_id,
      subject: { type: 'monitor', id: monitor.id, name: 'Shop' },
      data: { url: 'https://shop.example/health', regions: ['eu'], cause: '', incident_id: incidentId, started_at: iso(now), evidence: [] },
    },
  },
  {
    name: 'reports a closed incident as monitor.up at its end, with the duration the repo measured',
    monitor,
    applied: { type: 'close', ended_at: iso(ago(5)), incident_id: incidentId, duration_seconds: 120 },
    expect: {
      kind: 'monitor.up',
      occurred_at: iso(ago(5)),
      project_id: monitor.project_id,
      subject: { type: 'monitor', id: monitor.id, name: 'Shop' },
      data: { url: 'https://shop.example/health', incident_id: incidentId, duration_seconds: 120 },
    },
  },
  {
    name: 'leaves the credentials of a stored URL out of a down event',
    monitor: { ...monitor, url: 'https://ops:s3cret@shop.example/health' },
    applied: { type: 'open', started_at: iso(now), cause: 'timeout', regions: ['eu'], incident_id: incidentId, evidence: [] },
    expect: {
      kind: 'monitor.down',
      occurred_at: iso(now),
      project_id: monitor.project_id,
      subject: { type: 'monitor', id: monitor.id, name: 'Shop' },
      data: {
        url: 'https://shop.example/health',
        regions: ['eu'],
        cause: 'timeout',
        incident_id: incidentId,
        started_at: iso(now),
        evidence: [],
      },
    },
  },
  {
    name: 'leaves the credentials of a stored URL out of an up event',
    monitor: { ...monitor, url: 'https://ops@shop.example/health' },
    applied: { type: 'close', ended_at: iso(now), incident_id: incidentId, duration_seconds: 0 },
    expect: {
      kind: 'monitor.up',
      occurred_at: iso(now),
      project_id: monitor.project_id,
      subject: { type: 'monitor', id: monitor.id, name: 'Shop' },
      data: { url: 'https://shop.example/health', incident_id: incidentId, duration_seconds: 0 },
    },
  },
];

describe('the event of an applied incident change', () => {
  for (const row of eventRows) {
    it(row.name, () => {
      assert.deepEqual(incidentEvent(row.monitor, row.applied), row.expect);
    });
  }
});
