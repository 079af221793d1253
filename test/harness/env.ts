/** Variables `test/run.ts` hands to every test process. */
export const testEnv = {
  pg: 'UPTIME_TEST_PG_ADMIN_URL',
  nats: 'UPTIME_TEST_NATS_URL',
  scratch: 'UPTIME_TEST_SCRATCH',
  /** Where every test process writes its log lines and the secrets it created (see test/run.ts). */
  logDir: 'UPTIME_TEST_LOG_DIR',
} as const;

export function requireTestEnv(name: 'pg' | 'nats' | 'scratch'): string {
  const value =
    process.env[testEnv[name]] ?? (name === 'pg' ? process.env.TEST_DATABASE_URL : name === 'nats' ? process.env.TEST_NATS_URL : undefined);
  if (!value) {
    throw new Error(
      `${testEnv[name]} is not set: run tests through \`npm test\` (or \`npm run test:only -- <file>\`), ` +
        'or set TEST_DATABASE_URL and TEST_NATS_URL',
    );
  }
  return value;
}
