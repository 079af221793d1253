import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  decideStep,
  FAILING_AFTER_ATTEMPTS,
  FAILING_AFTER_MS,
  integrationFailing,
  type AlertStep,
  type AlertTimes,
  type ResponsePolicy,
} from '../../control-plane/src/alerts/rules.ts';
import { alertIdOf, signLink, verifyLink } from '../../control-plane/src/alerts/links.ts';

const M = 60_000;
const open: AlertTimes = {
  openedAt: 0,
  acknowledged: false,
  resolved: false,
  snoozedUntil: null,
  renotified: 0,
  renotifyAnchor: 0,
  escalated: false,
};
const both: ResponsePolicy = { renotifyMs: 5 * M, escalateAfterMs: 12 * M, escalationTargets: 1 };

describe('the step of an alert (re-notify, escalate)', () => {
  const rows: [string, Partial<AlertTimes>, ResponsePolicy, number, AlertStep][] = [
    ['waits for the first reminder', {}, both, 4 * M, { action: 'wait', next: 5 * M }],
    [
      're-notifies when the period has passed',
      {},
      both,
      5 * M,
      { action: 'renotify', count: 1, scheduledAt: 5 * M, anchor: 5 * M, next: 10 * M },
    ],
    [
      'counts the next reminder from the grid, not from a late pass',
      {},
      both,
      5 * M + 40_000,
      { action: 'renotify', count: 1, scheduledAt: 5 * M, anchor: 5 * M, next: 10 * M },
    ],
    [
      'sends one reminder, not the ones missed, after an outage of the notify role',
      { renotified: 1, renotifyAnchor: 5 * M },
      { ...both, escalateAfterMs: null },
      47 * M,
      { action: 'renotify', count: 2, scheduledAt: 10 * M, anchor: 45 * M, next: 50 * M },
    ],
    [
      'escalates when both are due, the reminder following',
      { renotified: 2, renotifyAnchor: 10 * M },
      both,
      15 * M,
      { action: 'escalate', next: 15 * M },
    ],
    ['escalates once', { renotified: 2, renotifyAnchor: 10 * M, escalated: true }, both, 13 * M, { action: 'wait', next: 15 * M }],
    [
      'does not escalate without escalation integrations',
      {},
      { ...both, escalationTargets: 0, renotifyMs: null },
      60 * M,
      { action: 'wait', next: null },
    ],
    ['does nothing once acknowledged', { acknowledged: true }, both, 60 * M, { action: 'wait', next: null }],
    ['does nothing once resolved', { resolved: true }, both, 60 * M, { action: 'wait', next: null }],
    [
      'does nothing without a policy',
      {},
      { renotifyMs: null, escalateAfterMs: null, escalationTargets: 0 },
      60 * M,
      { action: 'wait', next: null },
    ],
    ['waits for a snooze', { snoozedUntil: 30 * M }, both, 20 * M, { action: 'wait', next: 30 * M }],
    [
      'escalates at the end of a snooze that covered its time',
      { snoozedUntil: 30 * M },
      both,
      30 * M,
      { action: 'escalate', next: 30 * M },
    ],
    [
      're-notifies at once when a snooze ends, then every period from there',
      { snoozedUntil: 32 * M, escalated: true },
      both,
      32 * M,
      { action: 'renotify', count: 1, scheduledAt: 32 * M, anchor: 32 * M, next: 37 * M },
    ],
    [
      'ignores a snooze that ended before the reminder was due',
      { snoozedUntil: 2 * M },
      both,
      5 * M,
      { action: 'renotify', count: 1, scheduledAt: 5 * M, anchor: 5 * M, next: 10 * M },
    ],
  ];
  for (const [name, times, policy, now, expected] of rows) {
    it(name, () => assert.deepEqual(decideStep({ ...open, ...times }, policy, now), expected));
  }
});

describe('an integration that keeps failing', () => {
  const rows: [string, { failures: number; failingSince: number; alerted: boolean }, number, boolean][] = [
    ['one failure is not a run', { failures: 1, failingSince: 0, alerted: false }, 30 * M, false],
    ['fewer attempts than the threshold, and recent', { failures: FAILING_AFTER_ATTEMPTS - 1, failingSince: 0, alerted: false }, M, false],
    ['the threshold of attempts in a row', { failures: FAILING_AFTER_ATTEMPTS, failingSince: 0, alerted: false }, M, true],
    ['two failures ten minutes apart', { failures: 2, failingSince: 0, alerted: false }, FAILING_AFTER_MS, true],
    ['told once per run', { failures: 9, failingSince: 0, alerted: true }, 60 * M, false],
  ];
  for (const [name, run, at, expected] of rows) it(name, () => assert.equal(integrationFailing(run, at), expected));
});

describe('signed links', () => {
  const key = Buffer.alloc(32, 7);
  const id = '0b0e7f3e-1c57-4a40-9c55-0f5e5b1e2d3a';
  it('verifies its own signature, for its purpose and id only', () => {
    const sig = signLink(key, 'acknowledge', id);
    assert.equal(sig.length, 43);
    assert.equal(verifyLink(key, 'acknowledge', id, sig), true);
    assert.equal(verifyLink(key, 'snooze', id, sig), false);
    assert.equal(verifyLink(key, 'acknowledge', id.replace('0b', '0c'), sig), false);
    assert.equal(verifyLink(Buffer.alloc(32, 8), 'acknowledge', id, sig), false);
    assert.equal(verifyLink(key, 'acknowledge', id, sig.slice(0, 42)), false);
    assert.equal(verifyLink(key, 'acknowledge', id, undefined), false);
  });
  it('names the alert of the messages a person can act on', () => {
    assert.equal(alertIdOf({ id, event: 'monitor.down', data: {} }), id);
    assert.equal(alertIdOf({ id: 'x', event: 'alert.renotified', data: { alert_id: id } }), id);
    assert.equal(alertIdOf({ id, event: 'monitor.up', data: {} }), null);
    assert.equal(alertIdOf({ id, event: 'monitor.settled', data: { status: 'down' } }), id);
    assert.equal(alertIdOf({ id, event: 'alert.acknowledged', data: { alert_id: id } }), null);
  });
});
