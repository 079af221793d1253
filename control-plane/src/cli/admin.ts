import type { Command } from 'commander';
import type { CliContext } from './context.ts';

/**
 * The admin commands. Their work (the database, the account services) is imported when one runs.
 * Each prints its result last on stdout, after every child it started has stopped.
 */
export function adminCommands(program: Command, ctx: CliContext): void {
  program
    .command('migrate')
    .description('Apply pending database migrations (start-up applies them too).')
    .action(async () => {
      const { migrateCommand } = await import('./database.ts');
      await migrateCommand(await ctx());
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
      const [{ withDatabase }, { createUser }] = await Promise.all([import('./database.ts'), import('../accounts/service.ts')]);
      await withDatabase(await ctx(), async (sql) => {
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
      const [{ withDatabase }, { createToken, findUserIdByEmail }] = await Promise.all([
        import('./database.ts'),
        import('../accounts/service.ts'),
      ]);
      await withDatabase(await ctx(), async (sql) => {
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
      const [{ withDatabase }, { findUserIdByEmail, revokeTokenByName }] = await Promise.all([
        import('./database.ts'),
        import('../accounts/service.ts'),
      ]);
      await withDatabase(await ctx(), async (sql) => {
        const userId = await findUserIdByEmail(sql, opts.email);
        await revokeTokenByName(sql, userId, opts.name.trim());
        return `revoked token "${opts.name.trim()}"`;
      });
    });
}

export function keyCommands(program: Command, ctx: CliContext): void {
  program
    .command('agent-key')
    .description('Print the AGENT_KEY that separate probe agents need to open check credentials (derived from SECRET_KEY).')
    .action(async () => {
      const { config } = await ctx();
      const [{ deriveKeys, masterKey }, { keyToText }] = await Promise.all([
        import('../runtime/keys.ts'),
        import('../../../shared/src/crypto.ts'),
      ]);
      process.stdout.write(`${keyToText(deriveKeys(masterKey(config)).checkCredentials)}\n`);
    });
}
