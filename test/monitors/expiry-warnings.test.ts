import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  certificateDecision,
  expiryWarningsDue,
  thresholdsCovered,
  type SeenCertificate,
} from '../../control-plane/src/monitors/expiry-warnings.ts';

const DAY = 86_400_000;

describe('which expiry warning is due', () => {
  const now = new Date('2030-01-01T00:00:00Z');
  const thresholdsDays = [30, 14, 7, 1];
  const rows: [string, number, number[], number | null][] = [
    ['40 days left: none', 40, [], null],
    ['exactly 30 days left: the 30-day one', 30, [], 30],
    ['20 days left: the 30-day one', 20, [], 30],
    ['20 days left, 30 sent: none', 20, [30], null],
    ['10 days left, 30 sent: the 14-day one', 10, [30], 14],
    ['5 days left, nothing sent (service was off): only the 7-day one', 5, [], 7],
    ['5 days left, 30, 14 and 7 sent: none', 5, [30, 14, 7], null],
    ['5 days left, 7 sent: none (30 and 14 are never sent late)', 5, [7], null],
    ['12 hours left, 30, 14 and 7 sent: the 1-day one', 0.5, [30, 14, 7], 1],
    ['expired 2 days ago, 30, 14 and 7 sent: the 1-day one', -2, [30, 14, 7], 1],
    ['expired, all sent: none', -2, [30, 14, 7, 1], null],
  ];
  for (const [name, daysLeft, alreadySent, due] of rows) {
    it(name, () => {
      const expiresAt = new Date(now.getTime() + daysLeft * DAY);
      assert.equal(expiryWarningsDue({ expiresAt, now, thresholdsDays, alreadySent }), due);
    });
  }
  it('none without thresholds', () => assert.equal(expiryWarningsDue({ expiresAt: now, now, thresholdsDays: [], alreadySent: [] }), null));

  const covered: [number, number[], number[]][] = [
    [7, [30, 14, 7, 1], [7, 14, 30]],
    [30, [30, 14, 7, 1], [30]],
    [1, [7, 1, 7], [1, 7]],
  ];
  for (const [sent, thresholds, expected] of covered) {
    it(`a warning at ${sent} days covers ${expected.join(', ')} of ${thresholds.join(', ')}`, () =>
      assert.deepEqual(thresholdsCovered(sent, thresholds), expected));
  }
});

describe('what a check of a certificate changes for its monitor', () => {
  const checkedAt = new Date('2030-01-01T00:00:00Z');
  const thresholdsDays = [30, 14, 7, 1];
  const cert = (fingerprint256: string, daysLeft: number, at = checkedAt): SeenCertificate => ({
    fingerprint256,
    validTo: new Date(checkedAt.getTime() + daysLeft * DAY),
    checkedAt: at,
  });
  const earlier = new Date(checkedAt.getTime() - 60_000);
  const later = new Date(checkedAt.getTime() + 60_000);
  const rows: [string, SeenCertificate | null, SeenCertificate, number[], number[], { store: boolean; warn: number | null }][] = [
    ['the first certificate seen, 90 days left: stored, no warning', null, cert('A', 90), thresholdsDays, [], { store: true, warn: null }],
    ['the same certificate again: nothing', cert('A', 90, earlier), cert('A', 90), thresholdsDays, [], { store: false, warn: null }],
    [
      'the same certificate, now 10 days left: the 14-day warning',
      cert('A', 10, earlier),
      cert('A', 10),
      thresholdsDays,
      [30],
      { store: true, warn: 14 },
    ],
    [
      '10 days left, 14 and 30 sent: nothing',
      cert('A', 10, earlier),
      cert('A', 10),
      thresholdsDays,
      [14, 30],
      { store: false, warn: null },
    ],
    [
      'a renewed certificate (new fingerprint), 90 days left: stored, no warning',
      cert('A', 3, earlier),
      cert('B', 90),
      thresholdsDays,
      [],
      { store: true, warn: null },
    ],
    [
      'a renewed certificate, 5 days left, none sent for it: the 7-day warning',
      cert('A', 3, earlier),
      cert('B', 5),
      thresholdsDays,
      [],
      { store: true, warn: 7 },
    ],
    [
      'the same fingerprint with a new expiry: stored',
      cert('A', 20, earlier),
      cert('A', 40),
      thresholdsDays,
      [],
      { store: true, warn: null },
    ],
    [
      'a result older than the stored one: nothing, even when a warning would be due',
      cert('B', 90, later),
      cert('A', 5),
      thresholdsDays,
      [],
      { store: false, warn: null },
    ],
    [
      'warnings turned off ([]): a changed certificate is still stored',
      cert('A', 5, earlier),
      cert('B', 5),
      [],
      [],
      { store: true, warn: null },
    ],
    ['warnings turned off ([]): an unchanged one is not', cert('A', 5, earlier), cert('A', 5), [], [], { store: false, warn: null }],
    [
      'an expired certificate, 7 sent: the 1-day warning',
      cert('A', -1, earlier),
      cert('A', -1),
      thresholdsDays,
      [7, 14, 30],
      { store: true, warn: 1 },
    ],
  ];
  for (const [name, stored, seen, thresholds, alreadySent, expected] of rows) {
    it(name, () => assert.deepEqual(certificateDecision({ stored, seen, thresholdsDays: thresholds, alreadySent }), expected));
  }
});
