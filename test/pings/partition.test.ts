import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { loadPartitions, partitionExpression } from '../../control-plane/src/heartbeats/deadline/repo.ts';
import { pingPartition } from '../../shared/src/pings/partition.ts';
import { createTestDatabase, type TestDatabase } from '../harness/db.ts';
import { createAccount } from '../harness/factories.ts';

// Expected values from `printf %s <id> | md5sum`: the first 8 hex digits, as an unsigned integer, modulo the count.
const rows = [
  { id: '00000000-0000-4000-8000-000000000000', md5: 0x6e9036f9, expected: { 1: 0, 7: 2, 16: 9, 1024: 761 } },
  { id: '6f1c2a7e-3b0d-4c5e-9f8a-1b2c3d4e5f60', md5: 0xb18aba6e, expected: { 1: 0, 7: 5, 16: 14, 1024: 622 } },
  { id: 'ffffffff-ffff-4fff-bfff-ffffffffffff', md5: 0x51eac700, expected: { 1: 0, 7: 1, 16: 0, 1024: 768 } },
];

describe('ping partitions', () => {
  for (const row of rows) {
    for (const [count, partition] of Object.entries(row.expected)) {
      it(`puts ${row.id} in partition ${partition} of ${count}`, () => {
        assert.equal(pingPartition(row.id, Number(count)), partition);
        assert.equal(row.md5 % Number(count), partition);
      });
    }
  }

  it('gives an upper-case id the partition of its lower-case form, as Postgres prints ids', () => {
    for (const row of rows) assert.equal(pingPartition(row.id.toUpperCase(), 16), row.expected[16]);
  });

  it('spreads random ids evenly', () => {
    const counts = new Array<number>(16).fill(0);
    for (let i = 0; i < 16_000; i++) counts[pingPartition(randomUUID(), 16)]!++;
    for (const c of counts) assert.ok(c > 800 && c < 1200, `partition sizes ${counts.join(',')}`);
  });

  describe('in Postgres', () => {
    const rowsOf = async <T>(chunks: AsyncIterable<T[]>) => {
      const all: T[] = [];
      for await (const chunk of chunks) all.push(...chunk);
      return all;
    };
    let db: TestDatabase;
    before(async () => {
      db = await createTestDatabase();
    });
    after(() => db.drop());

    it('loads exactly the heartbeats the shared function assigns to each partition', async () => {
      const { project_id } = await createAccount(db.sql);
      const created = await db.sql<{ id: string }[]>`
        insert into heartbeats (project_id, name, grace_period)
        select ${project_id}, 'h' || n, 60 from generate_series(1, 200) n returning id`;
      await db.sql`insert into heartbeats (id, project_id, name, grace_period) values (${rows[1]!.id}, ${project_id}, 'fixed', 60)`;
      for (const partitions of [1, 7, 16]) {
        const seen = new Set<string>();
        for (let p = 0; p < partitions; p++) {
          for (const hb of await rowsOf(loadPartitions(db.sql, partitions, [p], 50))) {
            assert.equal(pingPartition(hb.id, partitions), p, `${hb.id} in ${partitions} partitions`);
            assert.equal(hb.partition, p, `${hb.id}: the partition Postgres computed`);
            seen.add(hb.id);
          }
        }
        assert.equal(seen.size, created.length + 1);
      }
      const [fixed] = (await rowsOf(loadPartitions(db.sql, 1024, [622]))).filter((h) => h.id === rows[1]!.id);
      assert.ok(fixed, 'the md5 value agrees with Postgres');
    });

    it("reads the default count's partitions through the index of migration 0035, and another count without it", async () => {
      const plan = async (partitions: number) =>
        db.sql.begin(async (tx) => {
          // Whatever the table's size, the plan shows whether an index matches the expression at all.
          await tx`set local enable_seqscan = off`;
          const lines = await tx.unsafe<{ 'QUERY PLAN': string }[]>(
            `explain select id from heartbeats h where ${partitionExpression(partitions)} = any('{3,4}'::int[])`,
          );
          return lines.map((l) => l['QUERY PLAN']).join('\n');
        });
      assert.match(await plan(16), /heartbeats_ping_partition_16_idx/);
      assert.doesNotMatch(await plan(7), /heartbeats_ping_partition_16_idx/);
      assert.throws(() => partitionExpression(1.5), /not a positive integer/);
    });
  });
});
