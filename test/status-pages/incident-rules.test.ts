import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DomainEvent } from '../../shared/src/contracts/events.ts';
import type { ComponentState, IncidentImpact } from '../../control-plane/src/status-pages/overall.ts';
import {
  draftImpact,
  highestImpact,
  onOutageEnd,
  onOutageStart,
  outageOf,
  type IncidentAtEnd,
  type PreviousDraft,
  type Outage,
} from '../../control-plane/src/status-pages/incidents/rules.ts';

const project = '11111111-1111-4111-8111-111111111111';
const monitor = { type: 'monitor' as const, id: '22222222-2222-4222-8222-222222222222', name: 'Shop' };
const heartbeat = { type: 'heartbeat' as const, id: '33333333-3333-4333-8333-333333333333', name: 'Backup' };
const incident = '44444444-4444-4444-8444-444444444444';

const event = (kind: string, subject: DomainEvent['subject'], occurred_at: string, data: Record<string, unknown>) =>
  ({ kind, subject, occurred_at, project_id: project, data }) as Pick<
    DomainEvent,
    'kind' | 'occurred_at' | 'project_id' | 'subject' | 'data'
  >;

describe('which outage an event reports', () => {
  const rows: [string, ReturnType<typeof event>, Outage | null][] = [
    [
      'a monitor down: its incident, begun at the down',
      event('monitor.down', monitor, '2026-11-01T10:00:00Z', { incident_id: incident }),
      {
        key: `monitor:${incident}`,
        edge: 'start',
        project_id: project,
        subject: monitor,
        monitor_incident_id: incident,
        started_at: '2026-11-01T10:00:00.000Z',
        ended_at: null,
      },
    ],
    [
      'a monitor up: the same key, ended at the up, begun its duration before',
      event('monitor.up', monitor, '2026-11-01T10:05:00Z', { incident_id: incident, duration_seconds: 300 }),
      {
        key: `monitor:${incident}`,
        edge: 'end',
        project_id: project,
        subject: monitor,
        monitor_incident_id: incident,
        started_at: '2026-11-01T10:00:00.000Z',
        ended_at: '2026-11-01T10:05:00.000Z',
      },
    ],
    [
      'a heartbeat down: keyed by the heartbeat and when it went down',
      event('heartbeat.down', heartbeat, '2026-11-01T10:00:00.5Z', { down_since: '2026-11-01T10:00:00.5Z' }),
      {
        key: `heartbeat:${heartbeat.id}:2026-11-01T10:00:00.500Z`,
        edge: 'start',
        project_id: project,
        subject: heartbeat,
        monitor_incident_id: null,
        started_at: '2026-11-01T10:00:00.500Z',
        ended_at: null,
      },
    ],
    [
      'a heartbeat up: the same key, whatever its own instant',
      event('heartbeat.up', heartbeat, '2026-11-01T12:00:00Z', { down_since: '2026-11-01T10:00:00.500Z' }),
      {
        key: `heartbeat:${heartbeat.id}:2026-11-01T10:00:00.500Z`,
        edge: 'end',
        project_id: project,
        subject: heartbeat,
        monitor_incident_id: null,
        started_at: '2026-11-01T10:00:00.500Z',
        ended_at: '2026-11-01T12:00:00.000Z',
      },
    ],
    ['a monitor down without its incident', event('monitor.down', monitor, '2026-11-01T10:00:00Z', {}), null],
    ['a heartbeat up without down_since', event('heartbeat.up', heartbeat, '2026-11-01T10:00:00Z', { down_since: null }), null],
    ['a heartbeat late', event('heartbeat.late', heartbeat, '2026-11-01T10:00:00Z', { down_since: '2026-11-01T10:00:00Z' }), null],
    ['a degraded monitor', event('monitor.degraded', monitor, '2026-11-01T10:00:00Z', { incident_id: incident }), null],
    [
      'a maintenance window starting',
      event('maintenance.started', { type: 'maintenance_window', id: incident, name: 'w' }, '2026-11-01T10:00:00Z', {}),
      null,
    ],
  ];
  for (const [name, e, expected] of rows) it(`reads ${name}`, () => assert.deepEqual(outageOf(e), expected));
});

describe('how heavy a draft is, as the banner rule sees its component', () => {
  const rows: [string, ComponentState, IncidentImpact | null][] = [
    ['a down monitor', { type: 'monitor', status: 2, in_maintenance: false }, 'major'],
    ['a down heartbeat', { type: 'heartbeat', status: 'down', in_maintenance: false }, 'major'],
    ['a degraded monitor', { type: 'monitor', status: 4, in_maintenance: false }, 'minor'],
    ['a down monitor under maintenance: no draft', { type: 'monitor', status: 2, in_maintenance: true }, null],
    ['a down heartbeat under maintenance: no draft', { type: 'heartbeat', status: 'down', in_maintenance: true }, null],
  ];
  for (const [name, state, expected] of rows) it(`drafts ${name} as ${expected}`, () => assert.equal(draftImpact(state), expected));
});

describe('the heaviest impact of several', () => {
  const rows: [IncidentImpact[], IncidentImpact][] = [
    [[], 'none'],
    [['none'], 'none'],
    [['minor', 'none'], 'minor'],
    [['minor', 'critical', 'major'], 'critical'],
    [['major', 'minor'], 'major'],
  ];
  for (const [impacts, expected] of rows)
    it(`of [${impacts.join(', ')}] is ${expected}`, () => assert.equal(highestImpact(impacts), expected));
});

describe('what the end of an outage does to the incident drafted from it', () => {
  const base: IncidentAtEnd = { status: 'investigating', published: false, published_by_person: false, person_posted: false };
  const rows: [string, Partial<IncidentAtEnd>, ReturnType<typeof onOutageEnd>][] = [
    ['a draft', {}, 'resolve'],
    ['a draft a person wrote on', { person_posted: true, status: 'identified' }, 'resolve'],
    ['an incident published on its own', { published: true }, 'resolve'],
    ['one published on its own that a person wrote on', { published: true, person_posted: true }, 'suggest'],
    ['one a person published', { published: true, published_by_person: true }, 'suggest'],
    ['one a person published and moved to monitoring', { published: true, published_by_person: true, status: 'monitoring' }, 'suggest'],
    ['one resolved already', { status: 'resolved', published: true }, 'nothing'],
    ['a draft resolved already', { status: 'resolved' }, 'nothing'],
  ];
  for (const [name, over, expected] of rows) it(`${expected}s ${name}`, () => assert.equal(onOutageEnd({ ...base, ...over }), expected));
});

describe('what a new outage does on a page: a new draft, or the flapping incident goes on', () => {
  const at = '2026-11-27T10:00:00.000Z';
  const minutesBefore = (m: number) => new Date(Date.parse(at) - m * 60_000).toISOString();
  const resolved = (endedMinutesBefore: number, own = true): PreviousDraft => ({
    ended_at: minutesBefore(endedMinutesBefore),
    status: 'resolved',
    resolved_on_its_own: own,
  });
  const rows: [string, PreviousDraft | null, 'draft' | 'reopen'][] = [
    ['no incident of it on the page yet', null, 'draft'],
    ['its incident resolved on its own a minute ago', resolved(1), 'reopen'],
    ['resolved on its own 15 minutes ago, to the millisecond', resolved(15), 'reopen'],
    ['resolved on its own 16 minutes ago', resolved(16), 'draft'],
    ['resolved at the same instant the new outage began', resolved(0), 'reopen'],
    ['a person resolved it, or spoke for it', resolved(1, false), 'draft'],
    ['its outage still going (its end not read yet)', { ended_at: null, status: 'investigating', resolved_on_its_own: true }, 'draft'],
    ['ended, but a person keeps it open', { ended_at: minutesBefore(2), status: 'monitoring', resolved_on_its_own: false }, 'draft'],
    ['its recorded end after this start (read out of order)', { ...resolved(0), ended_at: '2026-11-27T10:05:00.000Z' }, 'draft'],
  ];
  for (const [name, previous, expected] of rows) it(name, () => assert.equal(onOutageStart(previous, at), expected));
});
