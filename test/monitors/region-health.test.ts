import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultTuning, judgeRegion, type RegionObservation, type RegionRecord } from '../../control-plane/src/monitors/regions/health.ts';

const now = Date.parse('2026-11-26T12:00:00Z');
const seen = (o: Partial<RegionObservation> = {}): RegionObservation => ({
  agents: 1,
  lastSeenAt: now,
  canaryAgents: 0,
  canaryAgentsFailing: 0,
  compared: 0,
  disagreeing: 0,
  ...o,
});
const healthy: RegionRecord = { state: 'healthy', reason: null, since: now - 3_600_000 };
const degraded = (reason: RegionRecord['reason']): RegionRecord => ({ state: 'degraded', reason, since: now - 60_000 });

describe('the health of a probe region', () => {
  // [name, stored record, observation, expected state, expected reason, expected change]
  const rows: [
    string,
    RegionRecord | null,
    RegionObservation,
    'healthy' | 'degraded',
    RegionRecord['reason'],
    'degraded' | 'recovered' | null,
  ][] = [
    ['a new region with a live agent is healthy, without an event', null, seen(), 'healthy', null, null],
    ['stays healthy with its agents live and no disagreement', healthy, seen({ compared: 50, disagreeing: 1 }), 'healthy', null, null],
    [
      'is not silent while the last agent went away only a moment ago',
      healthy,
      seen({ agents: 0, lastSeenAt: now - 10_000 }),
      'healthy',
      null,
      null,
    ],
    [
      'is silent once no agent has been live for the grace',
      healthy,
      seen({ agents: 0, lastSeenAt: now - 30_000 }),
      'degraded',
      'silent',
      'degraded',
    ],
    ['is silent with no agent ever seen', healthy, seen({ agents: 0, lastSeenAt: null }), 'degraded', 'silent', 'degraded'],
    [
      'is degraded when its only agent cannot reach its canaries',
      healthy,
      seen({ canaryAgents: 1, canaryAgentsFailing: 1 }),
      'degraded',
      'canaries',
      'degraded',
    ],
    [
      'is degraded when 2 of 3 agents cannot reach their canaries',
      healthy,
      seen({ agents: 3, canaryAgents: 3, canaryAgentsFailing: 2 }),
      'degraded',
      'canaries',
      'degraded',
    ],
    [
      'stays healthy when 1 of 2 agents cannot reach its canaries',
      healthy,
      seen({ agents: 2, canaryAgents: 2, canaryAgentsFailing: 1 }),
      'healthy',
      null,
      null,
    ],
    [
      'with canaries answering, disagreement does not degrade it (an outage its users see)',
      healthy,
      seen({ canaryAgents: 1, compared: 20, disagreeing: 20 }),
      'healthy',
      null,
      null,
    ],
    [
      'without canaries, most shared monitors failing only here degrade it',
      healthy,
      seen({ compared: 20, disagreeing: 11 }),
      'degraded',
      'disagreement',
      'degraded',
    ],
    ['without canaries, half of them is not most', healthy, seen({ compared: 20, disagreeing: 10 }), 'healthy', null, null],
    ['without canaries, too few monitors to judge by', healthy, seen({ compared: 2, disagreeing: 2 }), 'healthy', null, null],
    ['recovers when its canaries answer again', degraded('canaries'), seen({ canaryAgents: 1 }), 'healthy', null, 'recovered'],
    ['recovers when an agent is live again', degraded('silent'), seen(), 'healthy', null, 'recovered'],
    [
      'stays degraded while disagreement is above the recovery share',
      degraded('disagreement'),
      seen({ compared: 20, disagreeing: 5 }),
      'degraded',
      'disagreement',
      null,
    ],
    [
      'recovers once disagreement falls to the recovery share',
      degraded('disagreement'),
      seen({ compared: 20, disagreeing: 4 }),
      'healthy',
      null,
      'recovered',
    ],
    [
      'changes its reason without a second event',
      degraded('canaries'),
      seen({ agents: 0, lastSeenAt: now - 60_000 }),
      'degraded',
      'silent',
      null,
    ],
  ];
  for (const [name, prev, o, state, reason, change] of rows) {
    it(name, () => {
      const j = judgeRegion(prev, o, now, defaultTuning);
      assert.equal(j.next.state, state);
      assert.equal(j.next.reason, reason);
      assert.equal(j.change, change);
    });
  }

  it('dates a change now and keeps the date while the state holds', () => {
    assert.equal(judgeRegion(healthy, seen({ agents: 0, lastSeenAt: null }), now).next.since, now);
    assert.equal(judgeRegion(degraded('canaries'), seen({ canaryAgents: 1, canaryAgentsFailing: 1 }), now).next.since, now - 60_000);
    assert.equal(judgeRegion(healthy, seen(), now).next.since, healthy.since);
  });
});
