import { appendFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { pino } from 'pino';
import { createLogger, type Logger } from '../../shared/src/logger.ts';
import { testEnv } from './env.ts';

const logFile = () => {
  const dir = process.env[testEnv.logDir];
  return dir ? join(dir, `log-${process.pid}.ndjson`) : undefined;
};

/**
 * The logger every component under test gets. Run through `test/run.ts`, every line goes to a
 * file of this process in the run's log directory (at `debug`, so that what a secret could leak
 * through is written and searched); TEST_LOG_LEVEL shows the lines on stdout instead, for
 * debugging one file. Without either, nothing is written.
 */
function testLogger(): Logger {
  const level = process.env.TEST_LOG_LEVEL;
  const file = logFile();
  if (level || !file) return createLogger({ level: level ?? 'silent' });
  // Synchronous: a test process may end without a chance to flush a buffer.
  return createLogger({ level: 'debug', destination: pino.destination({ dest: file, sync: true }) });
}

export const testLog = testLogger();

/**
 * A logger at `debug` whose lines a test can read, for asserting what reaches a log. The lines
 * also go to the run's log file, so the search after the run sees them too.
 */
export function captureLog(): { log: Logger; text(): string } {
  const lines: string[] = [];
  const file = logFile();
  const destination = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      if (file) appendFileSync(file, chunk);
      cb();
    },
  });
  return { log: createLogger({ level: 'debug', destination }), text: () => lines.join('') };
}
