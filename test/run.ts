/**
 * `npm test`: starts the shared test infrastructure once, then runs every test file with
 * node's test runner, in parallel. Postgres: TEST_DATABASE_URL (a server where databases may be
 * created) or an embedded Postgres in a temporary directory. NATS: TEST_NATS_URL or a private
 * nats-server child. Each test file then makes its own database and NATS namespace.
 *
 *   npm test                        every test under test/ (but test/distributed, test/reliability)
 *   npm run test:only -- test/x.test.ts   some files
 *
 * Every log line of the components under test (and of the product's child processes) goes to
 * files in a log directory; the tests register each secret they create there too (tokens,
 * passwords, integration credentials, keys: test/harness/secrets.ts). After the run, every log is
 * searched for every secret and for anything shaped like one of our tokens; a hit fails the run.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createLogger } from '../shared/src/logger.ts';
import { startEmbeddedPostgres } from '../control-plane/src/platform/embedded/postgres.ts';
import { startNatsServer } from '../control-plane/src/platform/embedded/nats-server.ts';
import { testEnv } from './harness/env.ts';
import { scanLogDir } from './harness/log-scan.ts';

const separateSuites = new Set(['distributed', 'reliability']);

function findTests(dir: string, top = true): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return top && separateSuites.has(name) ? [] : findTests(path, false);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

const log = createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'warn', destination: process.stderr });
const files = process.argv.slice(2).length > 0 ? process.argv.slice(2) : findTests('test').sort();
const stops: (() => Promise<void>)[] = [];
const scratch = mkdtempSync(join(tmpdir(), 'uptime-test-'));
chmodSync(scratch, 0o711); // as root, the embedded Postgres runs as `postgres` and must enter it
stops.push(async () => rmSync(scratch, { recursive: true, force: true }));
const logDir = join(scratch, 'logs');
mkdirSync(logDir);

let code = 1;
try {
  let pgUrl = process.env.TEST_DATABASE_URL;
  if (!pgUrl) {
    const pg = await startEmbeddedPostgres({ dataDir: join(scratch, 'pg'), log, database: 'postgres' });
    stops.push(pg.stop);
    pgUrl = pg.adminUrl;
  }
  let natsUrl = process.env.TEST_NATS_URL;
  if (!natsUrl) {
    const nats = await startNatsServer({ storeDir: join(scratch, 'nats'), log });
    stops.push(nats.stop);
    natsUrl = nats.url;
  }
  const concurrency = Number(process.env.TEST_CONCURRENCY ?? Math.max(2, availableParallelism()));
  process.stderr.write(`running ${files.length} test files, ${concurrency} at a time\n`);
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--test',
      '--test-reporter=spec',
      `--test-concurrency=${concurrency}`,
      ...files.map((f) => relative(process.cwd(), f)),
    ],
    {
      stdio: 'inherit',
      env: { ...process.env, [testEnv.pg]: pgUrl, [testEnv.nats]: natsUrl, [testEnv.scratch]: scratch, [testEnv.logDir]: logDir },
    },
  );
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  code = await new Promise<number>((resolve) => child.on('exit', (c, s) => resolve(c ?? (s ? 1 : 0))));
  if (!reportLeaks()) code = 1;
} catch (err) {
  process.stderr.write(`test infrastructure failed: ${err instanceof Error ? err.stack : String(err)}\n`);
} finally {
  for (const s of stops.reverse()) await s().catch(() => {});
}
process.exit(code);

/** Searches the run's logs for the secrets its tests created; false when one is found. */
function reportLeaks(): boolean {
  const started = Date.now();
  const scan = scanLogDir(logDir);
  const summary = `${scan.files} log files (${(scan.bytes / 1e6).toFixed(1)} MB) searched for ${scan.secrets} secrets and token shapes in ${Date.now() - started} ms`;
  if (scan.leaks.length === 0) {
    process.stderr.write(`${summary}: none found\n`);
    return true;
  }
  process.stderr.write(`\nSECRETS IN LOGS: ${summary}, ${scan.leaks.length} found:\n`);
  for (const l of scan.leaks.slice(0, 20)) process.stderr.write(`  ${l.file}:${l.line}: ${l.excerpt}\n`);
  return false;
}
