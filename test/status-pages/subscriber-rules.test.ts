import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  confirmationDue,
  incidentNoticesOwed,
  maintenanceConcernsPage,
  noticeEvent,
  noticeText,
  normalEmail,
  type NoticePayload,
  type PageShows,
  type TimelineUpdate,
} from '../../control-plane/src/status-pages/subscribers/rules.ts';

const u = (id: string, minute: number): TimelineUpdate => ({ id, at: `2026-11-27T10:${String(minute).padStart(2, '0')}:00.000Z` });

describe('which incident updates are owed a notice', () => {
  const a = u('a', 0);
  const b = u('b', 5);
  const c = u('c', 9);
  const rows: [string, boolean, TimelineUpdate[], string[], string[]][] = [
    ['a draft: nothing', false, [a, b], [], []],
    ['a draft whose updates were noticed while it was public: nothing', false, [a, b], ['a'], []],
    ['published, nothing noticed yet: its latest update only', true, [a, b, c], [], ['c']],
    ['published with one update: that one', true, [a], [], ['a']],
    ['the updates given newest first: still the latest by time', true, [c, a, b], [], ['c']],
    ['an update after the noticed one', true, [a, b], ['a'], ['b']],
    ['two updates after the noticed one: both, oldest first', true, [a, b, c], ['a'], ['b', 'c']],
    ['everything noticed: nothing', true, [a, b, c], ['a', 'b', 'c'], []],
    ['published again after a pause: nothing noticed is sent twice', true, [a, b], ['b'], []],
    ['earlier updates skipped at publication stay skipped', true, [a, b, c], ['b'], ['c']],
    ['no updates at all: nothing', true, [], [], []],
    ['two updates at the same instant: ordered by id', true, [u('y', 1), u('x', 1)], ['x'], ['y']],
  ];
  for (const [name, published, updates, noticed, owed] of rows) {
    it(name, () => assert.deepEqual(incidentNoticesOwed(published, updates, new Set(noticed)), owed));
  }
});

describe('which maintenance a page tells of', () => {
  const shop = 'm-shop';
  const api = 'm-api';
  const backup = 'h-backup';
  const some: PageShows = { monitors: new Set([shop]), heartbeats: new Set([backup]) };
  const rows: [string, { whole_project: boolean; monitor_ids: string[]; heartbeat_ids: string[] }, PageShows, boolean][] = [
    ['the whole project, on a page showing some', { whole_project: true, monitor_ids: [], heartbeat_ids: [] }, some, true],
    ['a monitor the page shows', { whole_project: false, monitor_ids: [shop], heartbeat_ids: [] }, some, true],
    ['a heartbeat the page shows', { whole_project: false, monitor_ids: [], heartbeat_ids: [backup] }, some, true],
    ['only what the page does not show', { whole_project: false, monitor_ids: [api], heartbeat_ids: [] }, some, false],
    ['one shown among others', { whole_project: false, monitor_ids: [api, shop], heartbeat_ids: [] }, some, true],
    [
      'a page showing everything: any window naming something',
      { whole_project: false, monitor_ids: [api], heartbeat_ids: [] },
      'all',
      true,
    ],
    ['a window naming nothing (its subjects deleted)', { whole_project: false, monitor_ids: [], heartbeat_ids: [] }, 'all', false],
    [
      'a page showing nothing',
      { whole_project: false, monitor_ids: [shop], heartbeat_ids: [] },
      { monitors: new Set(), heartbeats: new Set() },
      false,
    ],
  ];
  for (const [name, window, shows, expected] of rows) it(name, () => assert.equal(maintenanceConcernsPage(window, shows), expected));
});

describe('when another confirmation email may go', () => {
  const now = new Date('2026-11-27T10:00:00Z');
  const rows: [string, Date | null, boolean][] = [
    ['never sent', null, true],
    ['sent a minute ago', new Date(now.getTime() - 60_000), false],
    ['sent 9 min 59 s ago', new Date(now.getTime() - 599_000), false],
    ['sent 10 minutes ago', new Date(now.getTime() - 600_000), true],
    ['sent yesterday', new Date(now.getTime() - 86_400_000), true],
  ];
  for (const [name, last, due] of rows) it(name, () => assert.equal(confirmationDue(last, now), due));
});

describe('one email address a person can confirm', () => {
  const rows: [string, string | null][] = [
    ['ada@example.com', 'ada@example.com'],
    ['  Ada.Lovelace+status@Example.COM ', 'ada.lovelace+status@example.com'],
    ['ada@localhost', null],
    ['ada@example', null],
    ['ada example.com', null],
    ['ada@example.com, bob@example.com', null],
    ['Ada <ada@example.com>', null],
    ['ada@@example.com', null],
    ['ada@-example.com', null],
    ['ada@example.com\r\nBcc: eve@example.com', null],
    ['', null],
    [`${'a'.repeat(250)}@example.com`, null],
  ];
  for (const [raw, expected] of rows) it(JSON.stringify(raw).slice(0, 60), () => assert.equal(normalEmail(raw), expected));
});

describe('what a notice says', () => {
  const page = {
    title: 'Acme status',
    url: 'https://status.acme.test/',
    incidentUrl: (id: string) => `https://status.acme.test/incidents/${id}`,
  };
  const incident: NoticePayload = {
    kind: 'incident',
    incident_id: 'i1',
    update_id: 'u1',
    title: 'Checkout errors',
    impact: 'major',
    status: 'identified',
    message: 'A bad deploy; rolling back.',
    at: '2026-11-27T10:05:00.000Z',
    components: ['Web shop', 'API'],
    first: false,
  };
  it('an incident update: page, status and title in the subject; impact, time, components and message in the body', () => {
    const t = noticeText(incident, page);
    assert.equal(t.subject, '[Acme status] Identified: Checkout errors');
    assert.deepEqual(t.lines, [
      'Checkout errors',
      'Identified (update) · impact: major · 2026-11-27 10:05 UTC',
      'Affects: Web shop, API',
      '',
      'A bad deploy; rolling back.',
    ]);
    assert.equal(t.link, 'https://status.acme.test/incidents/i1');
    assert.equal(noticeEvent(incident), 'incident.updated');
    assert.equal(noticeEvent({ ...incident, first: true }), 'incident.published');
  });
  it('a maintenance start and end, the whole project or what it covers', () => {
    const m: NoticePayload = {
      kind: 'maintenance',
      window_id: 'w1',
      phase: 'started',
      name: 'Database upgrade',
      description: 'About 20 minutes.',
      starts_at: '2026-11-28T02:00:00.000Z',
      ends_at: '2026-11-28T03:00:00.000Z',
      at: '2026-11-28T02:00:00.000Z',
      components: [],
    };
    const t = noticeText(m, page);
    assert.equal(t.subject, '[Acme status] Maintenance started: Database upgrade');
    assert.deepEqual(t.lines, [
      'Database upgrade',
      'Maintenance started · 2026-11-28 02:00 UTC',
      'Scheduled: 2026-11-28 02:00 UTC to 2026-11-28 03:00 UTC',
      'Covers: all services',
      '',
      'About 20 minutes.',
    ]);
    assert.equal(t.link, 'https://status.acme.test/');
    const ended = noticeText({ ...m, phase: 'ended', description: '', components: ['API'] }, page);
    assert.equal(ended.subject, '[Acme status] Maintenance completed: Database upgrade');
    assert.equal(ended.lines[3], 'Covers: API');
    assert.equal(ended.lines.length, 4);
    assert.equal(noticeEvent({ ...m, phase: 'ended' }), 'maintenance.ended');
    assert.equal(noticeText({ ...m, phase: 'scheduled' }, page).subject, '[Acme status] Maintenance scheduled: Database upgrade');
    assert.equal(noticeEvent({ ...m, phase: 'scheduled' }), 'maintenance.scheduled');
  });
});
