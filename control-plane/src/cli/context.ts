import type { Config } from '../../../shared/src/config.ts';
import type { Logger } from '../../../shared/src/logger.ts';

export type CliContext = () => Promise<{ config: Config; log: Logger }>;

/** The settings and the logger of a command, loaded when the command runs (not for `--help`). */
export async function context(stream: 'stdout' | 'stderr'): Promise<{ config: Config; log: Logger }> {
  const [{ loadConfig }, { createLogger }] = await Promise.all([
    import('../../../shared/src/config.ts'),
    import('../../../shared/src/logger.ts'),
  ]);
  const config = loadConfig();
  const log = createLogger({ level: config.LOG_LEVEL, destination: stream === 'stdout' ? process.stdout : process.stderr });
  return { config, log };
}
