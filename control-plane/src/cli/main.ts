import { Command, Option } from 'commander';
import { ConfigError, loadConfig, type Config } from '../../../shared/src/config.ts';
import { createLogger, type Logger } from '../../../shared/src/logger.ts';
import { version } from '../../../shared/src/version.ts';
import { NatsServerMissingError } from '../platform/embedded/nats-server.ts';
import { AppError } from '../platform/errors.ts';
import { MissingSecretKeyError } from '../runtime/keys.ts';
import { allRoles, parseRoles } from '../runtime/roles.ts';
import { adminCommands, keyCommands } from './admin.ts';
import { runServer } from './serve.ts';

/**
 * `uptime <command>`: the one entry point of the product. Servers log to stdout; admin commands
 * log to stderr so that their last stdout line can be read by scripts.
 */
function context(stream: 'stdout' | 'stderr'): { config: Config; log: Logger } {
  const config = loadConfig();
  const log = createLogger({ level: config.LOG_LEVEL, destination: stream === 'stdout' ? process.stdout : process.stderr });
  return { config, log };
}

const program = new Command()
  .name('uptime')
  .description('Uptime monitoring: multi-region HTTP monitors, cron heartbeats and notification triggers.')
  .version(version)
  .showHelpAfterError();

program
  .command('start')
  .description(
    'Run everything in one process: every control-plane role and a probe agent for region REGION (default local). ' +
      'Without DATABASE_URL it runs an embedded Postgres, without NATS_URL a private nats-server, both under DATA_DIR.',
  )
  .action(async () => {
    const { config, log } = context('stdout');
    await runServer({ config, log, roles: allRoles, agentRegion: config.REGION });
  });

program
  .command('control-plane')
  .description('Run control-plane roles only (scale each role out by running more processes).')
  .addOption(new Option('--roles <roles>', `comma-separated roles: ${allRoles.join(',')}`).default(allRoles.join(',')))
  .action(async (opts: { roles: string }) => {
    const roles = parseRoles(opts.roles);
    const { config, log } = context('stdout');
    await runServer({ config, log, roles });
  });

program
  .command('probe-agent')
  .description('Run a probe agent: it checks the monitors of its region and talks to NATS only, never to Postgres.')
  .option('--region <region>', 'region this agent checks from (default: REGION)')
  .action(async (opts: { region?: string }) => {
    const { config, log } = context('stdout');
    const region = opts.region ? loadConfig({ ...process.env, REGION: opts.region }).REGION : config.REGION;
    await runServer({ config, log, roles: [], agentRegion: region });
  });

adminCommands(program, () => context('stderr'));
keyCommands(program, () => context('stderr'));

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof NatsServerMissingError || err instanceof MissingSecretKeyError) {
    process.stderr.write(`${err.message}\n`);
  } else if (err instanceof AppError) {
    process.stderr.write(`error: ${err.message}\n`);
  } else {
    process.stderr.write(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  }
  process.exit(1);
});
