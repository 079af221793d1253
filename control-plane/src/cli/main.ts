import { Command, Option } from 'commander';
import { version } from '../../../shared/src/version.ts';
import { allRoles } from '../runtime/roles.ts';
import { adminCommands, keyCommands } from './admin.ts';
import { context } from './context.ts';

/**
 * `uptime <command>`: the one entry point of the product. Servers log to stdout; admin commands
 * log to stderr so that their last stdout line can be read by scripts.
 *
 * What a command runs is imported when it runs: `uptime --help` and an admin command do not load
 * the HTTP server, the NATS client and the rest of the service.
 */
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
    const { config, log } = await context('stdout');
    const { runServer } = await import('./serve.ts');
    await runServer({ config, log, roles: allRoles, agentRegion: config.REGION, welcome: true });
  });

program
  .command('control-plane')
  .description('Run control-plane roles only (scale each role out by running more processes).')
  .addOption(new Option('--roles <roles>', `comma-separated roles: ${allRoles.join(',')}`).default(allRoles.join(',')))
  .action(async (opts: { roles: string }) => {
    const { parseRoles } = await import('../runtime/roles.ts');
    const roles = parseRoles(opts.roles);
    const { config, log } = await context('stdout');
    const { runServer } = await import('./serve.ts');
    await runServer({ config, log, roles });
  });

program
  .command('probe-agent')
  .description('Run a probe agent: it checks the monitors of its region and talks to NATS only, never to Postgres.')
  .option('--region <region>', 'region this agent checks from (default: REGION)')
  .action(async (opts: { region?: string }) => {
    const { config, log } = await context('stdout');
    const { loadConfig } = await import('../../../shared/src/config.ts');
    const region = opts.region ? loadConfig({ ...process.env, REGION: opts.region }).REGION : config.REGION;
    const { runServer } = await import('./serve.ts');
    await runServer({ config, log, roles: [], agentRegion: region });
  });

adminCommands(program, () => context('stderr'));
keyCommands(program, () => context('stderr'));

program.parseAsync(process.argv).catch(async (err: unknown) => {
  const { describeError } = await import('./errors.ts');
  process.stderr.write(`${describeError(err)}\n`);
  process.exit(1);
});
