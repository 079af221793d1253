import { performance } from 'node:perf_hooks';
import type { Logger } from './logger.ts';

/** One part of a process to stop, named for the log line that says it stopped. */
export interface StopStep {
  name: string;
  stop(): Promise<void>;
}

/**
 * Stops each part in the order given, one log line each ("stopped the probe agent"). A step
 * that fails is logged and the next still runs: a stuck NATS connection must not keep the
 * embedded Postgres running.
 */
export async function runStopSteps(log: Logger, steps: readonly StopStep[]): Promise<void> {
  for (const step of steps) {
    const t0 = performance.now();
    try {
      await step.stop();
      log.info({ ms: Math.round(performance.now() - t0) }, `stopped ${step.name}`);
    } catch (err) {
      log.warn({ err, step: step.name }, `stopping ${step.name} failed`);
    }
  }
}

/**
 * Runs `stop` once on SIGINT (Ctrl-C) or SIGTERM, then exits 0. A second signal while stopping
 * (a second later or more) exits at once, and a stop that hangs is cut short, so an operator is
 * never left with a stuck process. `stopping()` tells start-up code that a failure is the stop's doing, not its own.
 */
export function stopOnSignals(log: Logger, stop: () => Promise<void>, graceMs = 20_000): { stopping(): boolean } {
  let stopping = false;
  let firstAt = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      // `npm start` passes the terminal's Ctrl-C on to the process that got it already: one press.
      if (Date.now() - firstAt < 1_000) return;
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    firstAt = Date.now();
    // The terminal echoed ^C without a line break.
    if (signal === 'SIGINT' && process.stdout.isTTY) process.stdout.write('\n');
    log.info({ signal }, 'stopping (a second Ctrl-C exits at once)');
    const timer = setTimeout(() => {
      log.error('shutdown took too long: exiting');
      process.exit(1);
    }, graceMs);
    timer.unref();
    stop().then(
      () => {
        log.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return { stopping: () => stopping };
}
