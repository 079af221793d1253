import { performance } from 'node:perf_hooks';
import { machineInfo } from './machine.ts';
import { writeResult, type Figure, type Goal, type Part, type PartResult } from './result.ts';

export type PartContext = {
  quick: boolean;
  versions: Record<string, string>;
  method: string[];
  figures: Figure[];
  goals: Goal[];
  limits: PartResult['limits'];
  notes: string[];
  /** Runs when the part ends, in reverse order, whatever happened. */
  cleanup(fn: () => Promise<void> | void): void;
  log(message: string): void;
};

/** Thrown when a part cannot be measured here; the result says why instead of a figure. */
export class NotRun extends Error {}

/**
 * Runs one part as a script: collects what it measured into bench/results/<part>.json, marks it
 * "not run" or "failed" with the reason otherwise, and always stops what it started.
 */
export async function runPart(part: Part, title: string, body: (ctx: PartContext) => Promise<void>): Promise<void> {
  const quick = process.argv.includes('--quick');
  const startedAt = new Date();
  const machine = machineInfo();
  const t0 = performance.now();
  const cleanups: (() => Promise<void> | void)[] = [];
  const ctx: PartContext = {
    quick,
    versions: {},
    method: [],
    figures: [],
    goals: [],
    limits: [],
    notes: [],
    cleanup: (fn) => void cleanups.push(fn),
    log: (m) => process.stderr.write(`[${part}] ${m}\n`),
  };
  const stopAll = async () => {
    for (const fn of cleanups.splice(0).reverse())
      await Promise.resolve(fn()).catch((err: unknown) => ctx.log(`cleanup failed: ${String(err)}`));
  };
  const onSignal = () => void stopAll().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  let status: PartResult['status'] = 'ok';
  let reason: string | undefined;
  try {
    await body(ctx);
  } catch (err) {
    status = err instanceof NotRun ? 'not run' : 'failed';
    reason = err instanceof NotRun ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err);
    ctx.log(`${status}: ${reason}`);
  } finally {
    await stopAll();
  }
  const file = writeResult({
    part,
    title,
    status,
    ...(reason !== undefined ? { reason } : {}),
    quick,
    command: `npm run bench -- ${part}${quick ? ' --quick' : ''}`,
    startedAt: startedAt.toISOString(),
    durationS: Math.round((performance.now() - t0) / 100) / 10,
    machine,
    versions: ctx.versions,
    method: ctx.method,
    figures: ctx.figures,
    goals: ctx.goals,
    limits: ctx.limits,
    notes: ctx.notes,
  });
  ctx.log(`wrote ${file}`);
  process.exitCode = status === 'failed' ? 1 : 0;
}
