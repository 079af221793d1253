import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  cycleThrough,
  decideDependent,
  MAX_SETTLE_MS,
  settleMs,
  type DependentDecision,
  type DependentFacts,
  type ParentFacts,
} from '../../control-plane/src/dependencies/rules.ts';
import { decideFlap, settled, type FlapDecision } from '../../control-plane/src/monitors/flapping.ts';
import { pagerDutyEvents } from '../../control-plane/src/notifications/channels/pagerduty.ts';
import { groupDelivery, groupRelease } from '../../control-plane/src/notifications/grouping.ts';

const t0 = Date.parse('2026-11-26T12:00:00Z');
const monitorParent = (incident: ParentFacts['incident'], id = 'db'): ParentFacts => ({
  id,
  type: 'monitor',
  incident,
  heartbeatDown: false,
});
const heartbeatParent = (down: boolean, id = 'backup'): ParentFacts => ({ id, type: 'heartbeat', incident: null, heartbeatDown: down });
const facts = (f: Partial<DependentFacts>): DependentFacts => ({
  settleUntil: t0 + 65_000,
  now: t0,
  parents: [],
  joined: null,
  childStillDown: true,
  ...f,
});

describe('the dependency rule', () => {
  const rows: [string, DependentFacts, DependentDecision][] = [
    ['no parent at all: sent at once', facts({ settleUntil: t0 }), { action: 'send' }],
    [
      'a monitor parent in an open incident: the down joins it',
      facts({ parents: [monitorParent({ id: 'inc-1', open: true })] }),
      { action: 'join', parentId: 'db', incidentId: 'inc-1' },
    ],
    [
      'a heartbeat parent down: the down joins it (no incident of its own)',
      facts({ parents: [heartbeatParent(true)] }),
      { action: 'join', parentId: 'backup', incidentId: null },
    ],
    [
      'the first parent found down is joined when several are',
      facts({ parents: [monitorParent(null, 'host'), heartbeatParent(true), monitorParent({ id: 'inc-2', open: true })] }),
      { action: 'join', parentId: 'backup', incidentId: null },
    ],
    [
      'no parent down yet, inside the wait: waits until it ends',
      facts({ parents: [monitorParent(null)] }),
      { action: 'wait', until: t0 + 65_000 },
    ],
    ['no parent down when the wait ran out: sent', facts({ parents: [monitorParent(null)], now: t0 + 65_000 }), { action: 'send' }],
    [
      'a parent whose outage around the down is over, child still down: sent',
      facts({ parents: [monitorParent({ id: 'inc-1', open: false })] }),
      { action: 'send' },
    ],
    [
      'a parent whose outage is over, child recovered meanwhile: dropped',
      facts({ parents: [monitorParent({ id: 'inc-1', open: false })], childStillDown: false }),
      { action: 'drop' },
    ],
    [
      'joined, the parent recovered, child still down: it alerts now',
      facts({ parents: [monitorParent(null)], joined: { parentId: 'db', incidentId: 'inc-1' } }),
      { action: 'send' },
    ],
    [
      'joined, the parent recovered, child recovered too: nothing',
      facts({ parents: [monitorParent(null)], joined: { parentId: 'db', incidentId: 'inc-1' }, childStillDown: false }),
      { action: 'drop' },
    ],
    [
      'joined, the parent recovered 10 s ago: the child is given its own grace to recover too',
      facts({
        parents: [monitorParent(null)],
        joined: { parentId: 'db', incidentId: 'inc-1' },
        recoveredAt: t0 - 10_000,
        childGraceMs: 65_000,
      }),
      { action: 'wait', until: t0 + 55_000 },
    ],
    [
      'joined, the grace after the parent recovered ran out, child still down: it alerts',
      facts({
        parents: [monitorParent(null)],
        joined: { parentId: 'db', incidentId: 'inc-1' },
        recoveredAt: t0 - 65_000,
        childGraceMs: 65_000,
      }),
      { action: 'send' },
    ],
    [
      'joined, child recovered within the grace: nothing, without waiting',
      facts({
        parents: [monitorParent(null)],
        joined: { parentId: 'db', incidentId: 'inc-1' },
        recoveredAt: t0 - 1_000,
        childGraceMs: 65_000,
        childStillDown: false,
      }),
      { action: 'drop' },
    ],
    [
      'joined to one parent that recovered while another is down: joins the other',
      facts({ parents: [monitorParent(null), heartbeatParent(true)], joined: { parentId: 'db', incidentId: 'inc-1' } }),
      { action: 'join', parentId: 'backup', incidentId: null },
    ],
    [
      'a heartbeat parent up and no monitor parent: nothing to wait for',
      facts({ parents: [heartbeatParent(false)], settleUntil: t0 }),
      { action: 'send' },
    ],
    [
      'wait ran out but the child recovered meanwhile: dropped',
      facts({ parents: [monitorParent(null)], now: t0 + 70_000, childStillDown: false }),
      { action: 'drop' },
    ],
  ];
  for (const [name, input, expected] of rows) it(name, () => assert.deepEqual(decideDependent(input), expected));

  it('waits for a monitor parent one interval per confirming round plus 5 s, capped; not for a heartbeat', () => {
    assert.equal(settleMs({ type: 'monitor', intervalSeconds: 60, confirmDown: 1 }), 65_000);
    assert.equal(settleMs({ type: 'monitor', intervalSeconds: 30, confirmDown: 3 }), 95_000);
    assert.equal(settleMs({ type: 'monitor', intervalSeconds: 3600, confirmDown: 1 }), MAX_SETTLE_MS);
    assert.equal(settleMs({ type: 'heartbeat', intervalSeconds: null, confirmDown: null }), 0);
  });
});

describe('the dependency cycle rule', () => {
  const edges = new Map<string, string[]>([
    ['app', ['db', 'host']],
    ['db', ['host']],
    ['worker', ['app']],
  ]);
  const rows: [string, string, string[], string | null][] = [
    ['a new parent with no path back is fine', 'app', ['cache'], null],
    ['depending on itself is a cycle', 'db', ['db'], 'db'],
    ['a direct cycle: host depending on db, which depends on host', 'host', ['db'], 'db'],
    ['a longer cycle: host depending on worker -> app -> host', 'host', ['cache', 'worker'], 'worker'],
    ['a diamond is not a cycle', 'worker', ['db', 'host'], null],
  ];
  for (const [name, child, parents, expected] of rows) it(name, () => assert.equal(cycleThrough(edges, child, parents), expected));
});

describe('the flapping rule', () => {
  const policy = { threshold: 4, windowMs: 600_000 };
  const rows: [string, Parameters<typeof decideFlap>[0], FlapDecision][] = [
    ['off: every change is sent', { policy: { threshold: null, windowMs: 600_000 }, flapping: false, changes: 50 }, { action: 'send' }],
    ['at the threshold: still sent', { policy, flapping: false, changes: 4 }, { action: 'send' }],
    ['above the threshold: starts flapping', { policy, flapping: false, changes: 5 }, { action: 'start' }],
    ['flapping: the change is not sent', { policy, flapping: true, changes: 1 }, { action: 'suppress' }],
    [
      'flapping with the policy turned off meanwhile: still not sent until it settles',
      { policy: { threshold: null, windowMs: 600_000 }, flapping: true, changes: 0 },
      { action: 'suppress' },
    ],
  ];
  for (const [name, input, expected] of rows) it(name, () => assert.deepEqual(decideFlap(input), expected));

  it('settles a whole window after the last change, not before', () => {
    assert.equal(settled({ lastChangeAt: t0, windowMs: 600_000, now: t0 + 599_999 }), false);
    assert.equal(settled({ lastChangeAt: t0, windowMs: 600_000, now: t0 + 600_000 }), true);
  });
});

describe('the grouping rule', () => {
  const rows: [string, Parameters<typeof groupRelease>[0], number][] = [
    ['the first change opens a group a window long', { occurredAt: t0, windowMs: 30_000, openReleases: [] }, t0 + 30_000],
    ['a change inside an open group joins it', { occurredAt: t0 + 29_999, windowMs: 30_000, openReleases: [t0 + 30_000] }, t0 + 30_000],
    [
      'a change at the end of a group opens the next',
      { occurredAt: t0 + 30_000, windowMs: 30_000, openReleases: [t0 + 30_000] },
      t0 + 60_000,
    ],
    [
      'a late change (routed after a restart) joins the group open at its own time',
      { occurredAt: t0 + 5_000, windowMs: 30_000, openReleases: [t0 + 60_000, t0 + 30_000] },
      t0 + 30_000,
    ],
    [
      'a change routed late that occurred a moment before the group opened joins it',
      { occurredAt: t0 - 1, windowMs: 30_000, openReleases: [t0 + 30_000] },
      t0 + 30_000,
    ],
    [
      'a change more than a window before the group opened opens its own',
      { occurredAt: t0 - 30_001, windowMs: 30_000, openReleases: [t0 + 30_000] },
      t0 - 1,
    ],
  ];
  for (const [name, input, expected] of rows) it(name, () => assert.equal(groupRelease(input), expected));

  it('sends a group as one message per integration, except one alert or PagerDuty', () => {
    assert.deepEqual(groupDelivery({ members: 31, integrationType: 'webhook' }), { mode: 'grouped' });
    assert.deepEqual(groupDelivery({ members: 1, integrationType: 'slack' }), { mode: 'single' });
    assert.deepEqual(groupDelivery({ members: 31, integrationType: 'pagerduty' }), { mode: 'single' });
  });
});

describe('PagerDuty calls for the alert policies', () => {
  const base = {
    id: '0b5e7c8a-1f7e-4a8e-9c1c-0d3b1c7f5a10',
    message: 'm',
    occurred_at: '2026-11-26T12:00:00.000Z',
    project: { id: '5f0c3a0e-8d2b-4a4b-9d3e-2c1f0a9b8c7d', name: 'Shop' },
    subject: { type: 'monitor' as const, id: '7c1e2d3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f', name: 'api' },
  };
  const key = `uptime:monitor:${base.subject.id}`;
  const calls = (event: string, data: Record<string, unknown>) =>
    pagerDutyEvents({ ...base, event, data }, 'R0123456789abcdefghijklmnopqrstu', 'critical').map((e) => [e.event_action, e.dedup_key]);

  it('opens a flapping incident of its own, and resolves it when the monitor settles', () => {
    assert.deepEqual(calls('monitor.flapping', { status: 'down' }), [['trigger', `${key}:flapping`]]);
    assert.deepEqual(calls('monitor.settled', { status: 'up' }), [['resolve', `${key}:flapping`]]);
  });

  it('settled down: resolves the flapping incident and opens one for the outage, which its next up resolves', () => {
    assert.deepEqual(calls('monitor.settled', { status: 'down', incident_id: 'inc-9' }), [
      ['resolve', `${key}:flapping`],
      ['trigger', `${key}:inc-9`],
    ]);
    assert.deepEqual(calls('monitor.up', { incident_id: 'inc-9' }), [['resolve', `${key}:inc-9`]]);
  });

  it('keys a regional incident apart from the outages', () => {
    assert.deepEqual(calls('monitor.regional_down', { incident_id: 'r-1', regions: ['eu'] }), [['trigger', `${key}:regional:r-1`]]);
    assert.deepEqual(calls('monitor.regional_up', { incident_id: 'r-1' }), [['resolve', `${key}:regional:r-1`]]);
  });
});
