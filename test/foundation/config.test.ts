import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, settings } from '../../shared/src/config.ts';

describe('configuration', () => {
  it('applies the documented defaults to an empty environment', () => {
    const c = loadConfig({});
    assert.equal(c.PORT, 3000);
    assert.equal(c.HOST, '127.0.0.1');
    assert.equal(c.PUBLIC_URL, 'http://127.0.0.1:3000');
    assert.equal(c.PING_BASE_URL, 'http://127.0.0.1:3000');
    assert.equal(c.TRIGGER_BASE_URL, 'http://127.0.0.1:3000');
    assert.equal(c.NATS_NAMESPACE, 'uptime');
    assert.equal(c.DATA_DIR, './data');
    assert.equal(c.REGION, 'local');
    assert.equal(c.LOG_LEVEL, 'info');
    assert.equal(c.DATABASE_URL, undefined);
    assert.equal(c.NATS_URL, undefined);
    assert.equal(c.BLOCK_PRIVATE_TARGETS, false);
    assert.deepEqual(c.ALLOWED_PRIVATE_TARGETS, []);
  });

  it('reads ALLOWED_PRIVATE_TARGETS as a list of IP addresses, spaces and empty items ignored', () => {
    assert.deepEqual(loadConfig({ ALLOWED_PRIVATE_TARGETS: '10.0.0.5, fd00::7,,192.168.1.1 ' }).ALLOWED_PRIVATE_TARGETS, [
      '10.0.0.5',
      'fd00::7',
      '192.168.1.1',
    ]);
  });

  it('trusts no proxy unless TRUST_PROXY names them by address or range', () => {
    assert.equal(loadConfig({}).TRUST_PROXY, false);
    assert.equal(loadConfig({ TRUST_PROXY: 'false' }).TRUST_PROXY, false);
    assert.equal(loadConfig({ TRUST_PROXY: ' , ' }).TRUST_PROXY, false);
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,fd00::/8 ,loopback' }).TRUST_PROXY, [
      '10.0.0.0/8',
      '127.0.0.1',
      'fd00::/8',
      'loopback',
    ]);
  });

  it('derives the ping and trigger base URLs from PUBLIC_URL, without a trailing slash', () => {
    const c = loadConfig({ PUBLIC_URL: 'https://status.example.com/', TRIGGER_BASE_URL: 'https://hooks.example.com' });
    assert.equal(c.PUBLIC_URL, 'https://status.example.com');
    assert.equal(c.PING_BASE_URL, 'https://status.example.com');
    assert.equal(c.TRIGGER_BASE_URL, 'https://hooks.example.com');
  });

  it('builds PUBLIC_URL from HOST and PORT', () => {
    assert.equal(loadConfig({ HOST: '0.0.0.0', PORT: '8080' }).PUBLIC_URL, 'http://127.0.0.1:8080');
    assert.equal(loadConfig({ HOST: '::1', PORT: '8080' }).PUBLIC_URL, 'http://[::1]:8080');
  });

  it('treats an empty variable as unset', () => {
    assert.equal(loadConfig({ PORT: '', DATABASE_URL: '' }).PORT, 3000);
  });

  const bad: [string, Record<string, string>][] = [
    ['PORT', { PORT: 'eighty' }],
    ['PORT', { PORT: '70000' }],
    ['PUBLIC_URL', { PUBLIC_URL: 'not a url' }],
    ['NATS_URL', { NATS_URL: 'http://127.0.0.1:4222' }],
    ['NATS_NAMESPACE', { NATS_NAMESPACE: 'a.b' }],
    ['REGION', { REGION: 'EU West' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['BLOCK_PRIVATE_TARGETS', { BLOCK_PRIVATE_TARGETS: 'maybe' }],
    ['ALLOWED_PRIVATE_TARGETS', { ALLOWED_PRIVATE_TARGETS: '10.0.0.5,intranet.example' }],
    ['ALLOWED_PRIVATE_TARGETS', { ALLOWED_PRIVATE_TARGETS: '10.0.0.0/8' }],
    ['TRUST_PROXY', { TRUST_PROXY: 'true' }],
    ['TRUST_PROXY', { TRUST_PROXY: '2' }],
    ['TRUST_PROXY', { TRUST_PROXY: 'proxy.internal' }],
    ['TRUST_PROXY', { TRUST_PROXY: '10.0.0.0/33' }],
  ];
  for (const [name, env] of bad) {
    it(`stops with a message naming ${name} when it is invalid (${JSON.stringify(env[name])})`, () => {
      assert.throws(
        () => loadConfig(env),
        (err: unknown) => err instanceof ConfigError && err.message.includes(`${name}:`),
      );
    });
  }

  it('never echoes a database URL, which may hold a password', () => {
    try {
      loadConfig({ DATABASE_URL: 'postgres://u:s3cret@' });
      assert.fail('expected a ConfigError');
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /DATABASE_URL/);
      assert.doesNotMatch(err.message, /s3cret/);
    }
  });

  it('documents every setting in the README table', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const missing = Object.keys(settings).filter((name) => !readme.includes(`| \`${name}\``));
    assert.deepEqual(missing, []);
  });
});
