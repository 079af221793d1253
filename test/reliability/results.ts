import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * One row of a results file, `test/reliability/results/<test file stem>.json` (an array of rows).
 * `docs/reliability.md` is rendered from every results file found (test/reliability/report.ts).
 */
export interface ResultRow {
  fault: string;
  cycles: number;
  /** From the fault to everything acknowledged having taken effect again. */
  recovery_ms: { p50: number; max: number };
  /** Acknowledged items (pings, trigger calls, checks, alerts owed, notifications) that never took effect. */
  lost: number;
  /** Items that took effect more than once (or alerts nothing owed). */
  duplicated: number;
  notes?: string;
}

export const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));

/** The stem of a test file (`pauses.test.ts` -> `pauses`), from its import.meta.url. */
export function stemOf(testFileUrl: string): string {
  return basename(fileURLToPath(testFileUrl))
    .replace(/\.test\.ts$/, '')
    .replace(/\.ts$/, '');
}

export function writeResults(testFileUrl: string, rows: ResultRow[]): string {
  const file = join(resultsDir, `${stemOf(testFileUrl)}.json`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(rows, null, 2)}\n`);
  return file;
}

/** Nearest-rank median and maximum, in whole milliseconds. */
export function p50max(values: readonly number[]): { p50: number; max: number } {
  if (values.length === 0) return { p50: 0, max: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: Math.round(sorted[Math.ceil(sorted.length / 2) - 1]!), max: Math.round(sorted.at(-1)!) };
}
