import { join } from 'node:path';
import { pino } from 'pino';
import { createLogger, type Logger } from '../../shared/src/logger.ts';
import { testEnv } from './env.ts';

/**
 * The logger every component under test gets. Run through `test/run.ts`, every line goes to a
 * file of this process in the run's log directory (at `debug`, so that what a secret could leak
 * through is written and searched); TEST_LOG_LEVEL shows the lines on stdout instead, for
 * debugging one file. Without either, nothing is written.
 */
function testLogger(): Logger {
  const level = process.env.TEST_LOG_LEVEL;
  const dir = process.env[testEnv.logDir];
  if (level || !dir) return createLogger({ level: level ?? 'silent' });
  // Synchronous: a test process may end without a chance to flush a buffer.
  return createLogger({ level: 'debug', destination: pino.destination({ dest: join(dir, `log-${process.pid}.ndjson`), sync: true }) });
}

export const testLog = testLogger();
