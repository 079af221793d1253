import assert from 'node:assert/strict';
import type { ResultRow } from './results.ts';

/** Recovery is reported, not held to a target; this only catches a service that never came back. */
export const recoverySanityMs = 180_000;

/** Nothing lost, nothing doubled, every cycle recovered, no check of the cycle failed. */
export function assertClean(row: ResultRow, failures: string[]): void {
  assert.deepEqual(failures, [], `${row.fault}:\n${failures.join('\n')}`);
  assert.equal(row.lost, 0, `${row.fault}: lost ${row.lost}`);
  assert.equal(row.duplicated, 0, `${row.fault}: duplicated ${row.duplicated}`);
  assert.ok(row.recovery_ms.max <= recoverySanityMs, `${row.fault}: recovery took ${row.recovery_ms.max} ms`);
}
