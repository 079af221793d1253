import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  fairShare,
  leaseTiming,
  parseLeaseKey,
  planLeases,
  renewDue,
  validUntil,
  type LeaseView,
} from '../../control-plane/src/heartbeats/deadline/lease-plan.ts';

const timing = leaseTiming(10_000);
const set = (...xs: number[]) => new Set(xs);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('lease timing', () => {
  it('renews every 3 s, acts until 2 s before the TTL, and rounds every second for a 10 s TTL', () => {
    assert.deepEqual(timing, { ttlMs: 10_000, renewMs: 3_000, marginMs: 2_000, roundMs: 1_000, requestTimeoutMs: 2_000 });
  });

  const rows = [
    { name: 'a lease written at 0 is valid until 8 s', sentAt: 0, until: 8_000 },
    { name: 'the instant the request left counts, not when its answer came', sentAt: 1_500, until: 9_500 },
  ];
  for (const r of rows) it(r.name, () => assert.equal(validUntil(r.sentAt, timing), r.until));

  const due = [
    { writtenAt: 0, now: 2_999, due: false },
    { writtenAt: 0, now: 3_000, due: true },
    { writtenAt: 5_000, now: 7_000, due: false },
    { writtenAt: -Infinity, now: 0, due: true },
  ];
  for (const d of due) {
    it(`${d.due ? 'renews' : 'does not renew yet'} a lease written at ${d.writtenAt} at ${d.now}`, () =>
      assert.equal(renewDue(d.writtenAt, d.now, timing), d.due));
  }
});

describe('fair share', () => {
  const rows = [
    [16, 1, 16],
    [16, 2, 8],
    [16, 3, 6],
    [16, 5, 4],
    [16, 17, 1],
    [1, 3, 1],
    [16, 0, 16],
  ] as const;
  for (const [partitions, members, share] of rows) {
    it(`gives each of ${members} members ${share} of ${partitions} partitions`, () => assert.equal(fairShare(partitions, members), share));
  }
});

describe('lease plan', () => {
  const view = (v: Partial<LeaseView>): LeaseView => ({
    partitions: 16,
    members: 1,
    owned: set(),
    taken: set(),
    resumable: set(),
    seed: 0,
    ...v,
  });
  const rows: { name: string; view: LeaseView; acquire: number[]; release: number[] }[] = [
    { name: 'a lone member takes every partition', view: view({}), acquire: range(0, 16), release: [] },
    {
      name: 'a newcomer takes its share of what is free, from its seed on',
      view: view({ members: 2, taken: set(...range(0, 8)), seed: 3 }),
      acquire: range(8, 16),
      release: [],
    },
    {
      name: 'a newcomer takes nothing while the others still hold everything',
      view: view({ members: 2, taken: set(...range(0, 16)) }),
      acquire: [],
      release: [],
    },
    {
      name: 'a holder of everything gives back the highest partitions when a second member appears',
      view: view({ members: 2, owned: set(...range(0, 16)), taken: set(...range(0, 16)) }),
      acquire: [],
      release: range(8, 16).reverse(),
    },
    {
      name: 'a member at its share neither takes nor gives',
      view: view({ members: 2, owned: set(...range(0, 8)), taken: set(...range(0, 12)) }),
      acquire: [],
      release: [],
    },
    {
      name: 'a survivor takes the partitions of a member that is gone',
      view: view({ members: 1, owned: set(...range(0, 8)), taken: set(...range(0, 8)) }),
      acquire: range(8, 16),
      release: [],
    },
    {
      name: 'a member resumes a partition it lost before taking free ones',
      view: view({ members: 2, owned: set(0, 1, 2, 3, 4, 5, 6), taken: set(...range(0, 12)), resumable: set(9) }),
      acquire: [9],
      release: [],
    },
    {
      name: 'seeds wrap around the partitions',
      view: view({ partitions: 4, members: 2, seed: 3 }),
      acquire: [3, 0],
      release: [],
    },
  ];
  for (const r of rows) {
    it(r.name, () => assert.deepEqual(planLeases(r.view), { acquire: r.acquire, release: r.release }));
  }
});

describe('lease keys', () => {
  const rows = [
    { key: 'deadline.0', parsed: { partition: 0 } },
    { key: 'deadline.15', parsed: { partition: 15 } },
    { key: 'deadline-members.12345', parsed: { member: '12345' } },
    { key: 'notify.3', parsed: null },
    { key: 'deadline.x', parsed: null },
    { key: 'deadline', parsed: null },
  ];
  for (const r of rows) it(`reads ${r.key}`, () => assert.deepEqual(parseLeaseKey(r.key, 'deadline'), r.parsed));
});
