import type { Command } from 'commander';
import type { Config } from '../../../shared/src/config.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import { createToken, createUser, findUserIdByEmail, revokeTokenByName } from '../accounts/service.ts';
import { migrate } from '../platform/db/migrate.ts';
import { createSql, type Sql } from '../platform/db/sql.ts';
import { openInfra } from '../runtime/infra.ts';
import { deriveKeys, masterKey } from '../runtime/keys.ts';
import { keyToText } from '../../../shared/src/crypto.ts';

/**
 * Runs `fn` against the server's database: DATABASE_URL, or the embedded Postgres in DATA_DIR
 * (joined when `npm start` is running, started briefly otherwise). The result line is printed
 * last, after every child has stopped, so it is the final stdout line.
 */
async function withDatabase(ctx: () => { config: Config; log: Logger }, fn: (sql: Sql) => Promise<string>): Promise<void> {
  const { config, log } = ctx();
  const infra = await openInfra(config, log, { postgres: true, nats: false });
  const sql = createSql(infra.databaseUrl!, { log, max: 2 });
  let out: string;
  try {
    await migrate(sql, log);
    out = await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
    await infra.stop();
  }
  process.stdout.write(`${out}\n`);
}

export function adminCommands(program: Command, ctx: () => { config: Config; log: Logger }): void {
  program
    .command('migrate')
    .description('Apply pending database migrations (start-up applies them too).')
    .action(async () => {
      const { config, log } = ctx();
      const infra = await openInfra(config, log, { postgres: true, nats: false });
      const sql = createSql(infra.databaseUrl!, { log, max: 1 });
      try {
        const applied = await migrate(sql, log);
        process.stderr.write(applied.length ? `applied migrations ${applied.join(', ')}\n` : 'database is up to date\n');
      } finally {
        await sql.end({ timeout: 5 });
        await infra.stop();
      }
    });

  const user = program.command('user').description('Manage user accounts.');
  user
    .command('create')
    .description(
      'Create a user with an organization they own and a project named Default. Prints {"user_id","organization_id","project_id"}.',
    )
    .requiredOption('--email <email>', 'sign-in email')
    .requiredOption('--password <password>', 'sign-in password (at least 8 characters)')
    .option('--org <name>', 'organization name (default: derived from the email)')
    .action(async (opts: { email: string; password: string; org?: string }) => {
      if (!/^[^\s@]+@[^\s@]+$/.test(opts.email)) throw new Error('--email must be an email address');
      if (opts.password.length < 8) throw new Error('--password must be at least 8 characters');
      await withDatabase(ctx, async (sql) => {
        const created = await createUser(sql, {
          email: opts.email,
          password: opts.password,
          ...(opts.org ? { organization: opts.org } : {}),
        });
        return JSON.stringify(created);
      });
    });

  const token = program.command('token').description('Manage API and MCP tokens.');
  token
    .command('create')
    .description('Create a token for a user and print it (shown once; only its hash is stored).')
    .requiredOption('--email <email>', 'the user')
    .requiredOption('--name <name>', 'a descriptive name')
    .option('--mcp', "an MCP endpoint token instead of a REST API token (replaces the user's previous MCP token)")
    .action(async (opts: { email: string; name: string; mcp?: boolean }) => {
      if (!opts.name.trim() || opts.name.length > 255) throw new Error('--name must be 1-255 characters');
      await withDatabase(ctx, async (sql) => {
        const userId = await findUserIdByEmail(sql, opts.email);
        const created = await createToken(sql, userId, opts.name.trim(), opts.mcp ? 'mcp' : 'api');
        return created.token;
      });
    });
  token
    .command('revoke')
    .description("Revoke a user's token by name; it stops working from the next request on.")
    .requiredOption('--email <email>', 'the user')
    .requiredOption('--name <name>', 'the token name')
    .action(async (opts: { email: string; name: string }) => {
      await withDatabase(ctx, async (sql) => {
        const userId = await findUserIdByEmail(sql, opts.email);
        await revokeTokenByName(sql, userId, opts.name.trim());
        return `revoked token "${opts.name.trim()}"`;
      });
    });
}

export function keyCommands(program: Command, ctx: () => { config: Config; log: Logger }): void {
  program
    .command('agent-key')
    .description('Print the AGENT_KEY that separate probe agents need to open check credentials (derived from SECRET_KEY).')
    .action(() => {
      const { config } = ctx();
      process.stdout.write(`${keyToText(deriveKeys(masterKey(config)).checkCredentials)}\n`);
    });
}
