import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { testEnv } from '../harness/env.ts';
import { quietLog } from '../harness/db.ts';
import { findSecrets, scanLogDir } from '../harness/log-scan.ts';
import { urlCredential } from '../harness/secrets.ts';

/**
 * The search `test/run.ts` runs over every log line of the suite once all files have run: it
 * must find a registered secret wherever it sits, and anything shaped like one of our tokens
 * even when no test registered it.
 */
describe('the search for secrets in the logs of a test run', () => {
  it('finds every secret, at the start, in the middle and at the end of a log, among thousands', () => {
    const secrets = Array.from({ length: 3000 }, () => Buffer.from(randomBytes(24).toString('base64url')));
    const noise = Buffer.from(randomBytes(1_000_000).toString('base64'));
    assert.equal(findSecrets(noise, secrets).size, 0);
    const text = Buffer.concat([secrets[7]!, noise, secrets[1234]!, Buffer.from('\n'), secrets[2999]!]);
    const found = findSecrets(text, secrets);
    assert.deepEqual(
      [...found.keys()].sort((a, b) => a - b),
      [7, 1234, 2999],
    );
    assert.equal(found.get(7), 0);
    assert.equal(found.get(2999), text.length - secrets[2999]!.length);
  });

  it('reports a registered secret and an unregistered token in a log file, without printing either whole', () => {
    const dir = mkdtempSync(join(tmpdir(), 'uptime-scan-'));
    try {
      const password = `pw-${randomBytes(8).toString('hex')}`;
      const token = `uptm_${randomBytes(32).toString('base64url')}`;
      writeFileSync(join(dir, 'secrets-1.txt'), `${password}\n`);
      writeFileSync(join(dir, 'log-1.ndjson'), `{"msg":"fine"}\n{"msg":"signed in","password":"${password}"}\n`);
      writeFileSync(join(dir, 'child-1-1.log'), `started\nusing ${token} for the MCP endpoint\n`);
      const scan = scanLogDir(dir);
      assert.equal(scan.files, 2);
      assert.deepEqual(scan.leaks.map((l) => [l.file, l.line]).sort(), [
        ['child-1-1.log', 2],
        ['log-1.ndjson', 2],
      ]);
      for (const l of scan.leaks) assert.ok(!l.excerpt.includes(password) && !l.excerpt.includes(token), l.excerpt);
      writeFileSync(join(dir, 'log-1.ndjson'), '{"msg":"token created","prefix":"uptm_AbCdEf"}\n');
      rmSync(join(dir, 'child-1-1.log'));
      assert.deepEqual(scanLogDir(dir).leaks, [], 'the short display prefix is not a token');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes an integration URL for a secret unless it is a bare origin, which holds no credential', () => {
    for (const url of [
      'https://hooks.slack.com/services/T0/B0/abc',
      'http://127.0.0.1:40123/hook',
      'http://user:pw@127.0.0.1:40123',
      'http://127.0.0.1:40123/?key=abc',
      'not a url at all',
    ])
      assert.equal(urlCredential(url), url);
    for (const url of ['http://127.0.0.1:40123', 'http://127.0.0.1:40123/', 'https://hooks.example.com'])
      assert.equal(urlCredential(url), undefined);
  });

  it(
    'captures the log lines of the components under test in a file of this process',
    { skip: !process.env[testEnv.logDir] && 'run through test/run.ts' },
    () => {
      const marker = `capture-${randomBytes(6).toString('hex')}`;
      quietLog.info({ marker }, 'a line the run keeps');
      const file = join(process.env[testEnv.logDir]!, `log-${process.pid}.ndjson`);
      assert.match(readFileSync(file, 'utf8'), new RegExp(marker));
    },
  );
});
