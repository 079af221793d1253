import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  componentCondition,
  overallStatus,
  overallTexts,
  type ComponentCondition,
  type ComponentState,
  type IncidentImpact,
  type OverallLevel,
} from '../../control-plane/src/status-pages/overall.ts';
import type { HeartbeatStatus } from '../../control-plane/src/heartbeats/state.ts';

// Monitor statuses: 0 pending, 1 up, 2 down, 3 paused, 4 degraded.
const m = (status: number, in_maintenance = false): ComponentState => ({ type: 'monitor', status, in_maintenance });
const h = (status: HeartbeatStatus, in_maintenance = false): ComponentState => ({ type: 'heartbeat', status, in_maintenance });
const many = (n: number, c: ComponentState) => Array.from({ length: n }, () => c);

describe('what a status page component counts as', () => {
  const rows: [string, ComponentState, ComponentCondition][] = [
    ['a pending monitor', m(0), 'uncounted'],
    ['an up monitor', m(1), 'operational'],
    ['a down monitor', m(2), 'down'],
    ['a paused monitor', m(3), 'uncounted'],
    ['a degraded monitor', m(4), 'degraded'],
    ['a monitor of a status it does not know', m(9), 'uncounted'],
    ['a new heartbeat', h('new'), 'uncounted'],
    ['an up heartbeat', h('up'), 'operational'],
    ['a running heartbeat', h('running'), 'operational'],
    ['a late heartbeat', h('late'), 'degraded'],
    ['a down heartbeat', h('down'), 'down'],
    ['a paused heartbeat', h('paused'), 'uncounted'],
    ['a down monitor under maintenance', m(2, true), 'maintenance'],
    ['a paused heartbeat under maintenance', h('paused', true), 'maintenance'],
  ];
  for (const [name, c, expected] of rows) {
    it(`counts ${name} as ${expected}`, () => assert.equal(componentCondition(c), expected));
  }
});

describe('the banner of a status page', () => {
  // [name, components, incident impact, level]
  const rows: [string, ComponentState[], IncidentImpact, OverallLevel][] = [
    ['no components at all', [], 'none', 'operational'],
    ['everything up', [m(1), m(1), h('up'), h('running')], 'none', 'operational'],
    ['only pending, paused and new components', [m(0), m(3), h('new'), h('paused')], 'none', 'operational'],
    ['one down of one', [m(2)], 'none', 'major_outage'],
    ['one down of two (half)', [m(2), m(1)], 'none', 'major_outage'],
    ['one down of three (less than half)', [m(2), m(1), h('up')], 'none', 'partial_outage'],
    ['two down of four', [m(2), h('down'), m(1), m(1)], 'none', 'major_outage'],
    ['two down of five', [m(2), h('down'), m(1), m(1), h('up')], 'none', 'partial_outage'],
    ['every counted one down, paused ones beside', [m(2), h('down'), m(3), h('paused'), m(0)], 'none', 'major_outage'],
    ['one down of three, the paused not counted', [m(2), m(1), m(1), m(3), m(3), m(3)], 'none', 'partial_outage'],
    ['a degraded monitor among up ones', [m(4), m(1), m(1)], 'none', 'degraded'],
    ['a late heartbeat among up ones', [h('late'), m(1)], 'none', 'degraded'],
    ['degraded and down: the outage wins', [m(4), m(2), m(1), m(1)], 'none', 'partial_outage'],
    ['one under maintenance, the rest up', [m(1, true), m(1), h('up')], 'none', 'maintenance'],
    ['a down monitor under maintenance: maintenance, not an outage', [m(2, true), m(1)], 'none', 'maintenance'],
    ['everything under maintenance', [m(2, true), h('down', true)], 'none', 'maintenance'],
    ['maintenance and a degraded one: degraded', [m(1, true), m(4), m(1)], 'none', 'degraded'],
    ['maintenance and a down one: the share leaves maintenance out', [m(1, true), m(1, true), m(2), m(1)], 'none', 'major_outage'],
    ['maintenance and one down of three', [m(1, true), m(2), m(1), m(1)], 'none', 'partial_outage'],
    ['many up, one down', [...many(99, m(1)), m(2)], 'none', 'partial_outage'],
    ['a minor incident over an operational page', [m(1)], 'minor', 'degraded'],
    ['a minor incident over a page under maintenance', [m(1, true)], 'minor', 'degraded'],
    ['a minor incident does not lower a partial outage', [m(2), m(1), m(1)], 'minor', 'partial_outage'],
    ['a major incident over an operational page', [m(1), h('up')], 'major', 'partial_outage'],
    ['a major incident over a degraded page', [m(4), m(1)], 'major', 'partial_outage'],
    ['a major incident does not lower a major outage', [m(2)], 'major', 'major_outage'],
    ['a critical incident over an operational page', [m(1)], 'critical', 'major_outage'],
    ['a critical incident on a page without components', [], 'critical', 'major_outage'],
    ['no incident impact changes nothing', [m(4)], 'none', 'degraded'],
  ];
  for (const [name, components, impact, level] of rows) {
    it(`shows ${level} for ${name}${impact === 'none' ? '' : ` (${impact} incident)`}`, () => {
      assert.deepEqual(overallStatus(components, impact), { level, text: overallTexts[level] });
    });
  }

  it('says each level in words, never by colour alone', () => {
    assert.deepEqual(overallTexts, {
      operational: 'All systems operational',
      maintenance: 'Under maintenance',
      degraded: 'Degraded performance',
      partial_outage: 'Partial outage',
      major_outage: 'Major outage',
    });
  });

  it('reads no incident as none', () => {
    assert.equal(overallStatus([m(1)]).level, 'operational');
  });
});
