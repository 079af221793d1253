import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MachineInfo } from './machine.ts';
import type { ProfileSummary } from './profile.ts';

export const parts = [
  'checks',
  'check-types',
  'schedule',
  'pings',
  'misses',
  'apply',
  'ingest',
  'agent-memory',
  'first-check',
  'cli',
  'maintenance',
  'alerts',
  'status-page',
  'heartbeat-scale',
] as const;
export type Part = (typeof parts)[number];

export const benchDir = join(dirname(fileURLToPath(import.meta.url)), '..');
export const resultsDir = join(benchDir, 'results');

/** One measured quantity, with the baseline it is compared to when there is one. */
export type Figure = {
  metric: string;
  value: number | null;
  unit: string;
  baseline?: { label: string; value: number | null };
  /** value / baseline unless stated otherwise in the metric. */
  ratio?: number | null;
};

export type Goal = {
  goal: string;
  actual: string;
  met: boolean | null;
  /** How far off, when missed. */
  shortfall?: string;
};

export type PartResult = {
  part: Part;
  title: string;
  status: 'ok' | 'not run' | 'failed';
  reason?: string;
  quick: boolean;
  command: string;
  startedAt: string;
  durationS: number;
  machine: MachineInfo;
  /** Versions of what the part talked to (Postgres, nats-server, blackbox_exporter, wrk...). */
  versions: Record<string, string>;
  /** What was measured and how, computed from the parameters of the run. */
  method: string[];
  figures: Figure[];
  goals: Goal[];
  /** What limits a missed goal, from a CPU profile or a query plan taken in the same run. */
  limits: { title: string; profile?: ProfileSummary; text?: string }[];
  notes: string[];
};

export function writeResult(result: PartResult): string {
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, `${result.part}.json`);
  writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
  return file;
}

export function readResults(): PartResult[] {
  let names: string[] = [];
  try {
    names = readdirSync(resultsDir).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  const found = names.map((n) => JSON.parse(readFileSync(join(resultsDir, n), 'utf8')) as PartResult);
  return parts.flatMap((p) => found.filter((r) => r.part === p));
}
