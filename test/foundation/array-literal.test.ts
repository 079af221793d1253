import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { arrayLiteral } from '../../control-plane/src/platform/db/sql.ts';
import { createTestDatabase, type TestDatabase } from '../harness/db.ts';

describe('array parameters sent as one literal', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase({ migrate: false });
  });
  after(() => db.drop());

  it('reaches Postgres element for element: quotes, backslashes, commas, braces, spaces and NULL', async () => {
    const values = [
      'plain',
      'a "quoted" word',
      'back\\slash',
      'a,b',
      '{braces}',
      ' spaced ',
      '',
      'NULL',
      null,
      '2026-11-21 01:25:30.1234+00',
    ];
    const rows = await db.sql<{ v: string | null }[]>`select unnest(${arrayLiteral(values)}::text[]) as v`;
    assert.deepEqual(
      rows.map((r) => r.v),
      values,
    );
  });

  it('leaves out NUL, which text cannot hold, and reads as uuid[] and timestamptz[] where cast', async () => {
    const [r] = await db.sql<{ t: string; u: string; ts: string }[]>`
      select (${arrayLiteral(['a\u0000b'])}::text[])[1] as t,
        (${arrayLiteral(['7f8b3c2e-1d4a-4b6c-9e0f-123456789abc'])}::uuid[])[1]::text as u,
        (${arrayLiteral(['2026-11-21 01:25:30.1234+00'])}::timestamptz[])[1] = '2026-11-21T01:25:30.1234Z'::timestamptz as ts`;
    assert.equal(r!.t, 'ab');
    assert.equal(r!.u, '7f8b3c2e-1d4a-4b6c-9e0f-123456789abc');
    assert.equal(String(r!.ts), 'true');
  });
});
