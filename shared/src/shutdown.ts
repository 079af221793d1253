import type { Logger } from './logger.ts';

/**
 * Runs `stop` once on SIGINT or SIGTERM, then exits. A second signal while stopping exits at
 * once, and a stop that hangs is cut short, so an operator is never left with a stuck process.
 */
export function stopOnSignals(log: Logger, stop: () => Promise<void>, graceMs = 20_000): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'stopping');
    const timer = setTimeout(() => {
      log.error('shutdown took too long: exiting');
      process.exit(1);
    }, graceMs);
    timer.unref();
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
