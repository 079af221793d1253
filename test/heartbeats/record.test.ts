import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { toDate } from '../../control-plane/src/heartbeats/record.ts';
import { formatTimestamp } from '../../control-plane/src/platform/http/time.ts';

/** A timestamptz as Postgres prints it in UTC: trailing zeros of the fraction dropped. */
function pgText(ms: number, micros: number): string {
  const iso = new Date(ms).toISOString(); // 2026-11-21T01:25:30.123Z
  const fraction = `${iso.slice(20, 23)}${String(micros).padStart(3, '0')}`.replace(/0+$/, '');
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction ? `.${fraction}` : ''}+00`;
}

describe('stored timestamps read as dates', () => {
  it("reads Postgres's form as formatTimestamp does, to the millisecond", () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2200, 0, 1) }), fc.integer({ min: 0, max: 999 }), (ms, micros) => {
        const pg = pgText(ms, micros);
        assert.equal(toDate(pg)!.getTime(), new Date(formatTimestamp(pg)).getTime(), pg);
        assert.equal(toDate(pg)!.getTime(), ms, pg);
      }),
      { numRuns: 2_000 },
    );
  });

  it('reads other forms through formatTimestamp', () => {
    for (const text of ['2026-11-21T01:25:30.5Z', '2026-11-21 01:25:30.123456+00:00', '2026-11-21 01:25:30+00']) {
      assert.equal(toDate(text)!.getTime(), new Date(formatTimestamp(text)).getTime(), text);
    }
    assert.equal(toDate('2026-11-21 01:25:30.25+00')!.toISOString(), '2026-11-21T01:25:30.250Z');
    assert.equal(toDate(null), null);
    assert.throws(() => toDate('2026-11-21 01:2x:30+00'), /not a timestamp/);
  });
});
