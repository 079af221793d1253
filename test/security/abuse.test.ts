import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRateLimiter } from '../../shared/src/rate-limit.ts';
import { apiClient } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

describe('token buckets', () => {
  it('allows a burst, then refills at the configured rate', () => {
    const limiter = createRateLimiter({ perMinute: 60, burst: 2 });
    assert.equal(limiter.take('a', 0), 0);
    assert.equal(limiter.take('a', 0), 0);
    assert.equal(limiter.take('a', 0), 1, 'one token a second');
    assert.equal(limiter.take('b', 0), 0, 'keys are independent');
    assert.equal(limiter.take('a', 999), 1);
    assert.equal(limiter.take('a', 1_000), 0);
  });
});

describe('API abuse limits', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let bob: TestAccount;
  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'], env: { API_RATE_LIMIT: '3' } });
    ada = await createAccount(cp.db.sql);
    bob = await createAccount(cp.db.sql);
  });
  after(() => cp.stop());

  it('answers 429 with Retry-After once a token has used its rate, without affecting other tokens', async () => {
    const api = apiClient(cp.url, ada.token);
    for (let i = 0; i < 3; i++) assert.equal((await api('GET', '/projects')).status, 200);
    const limited = await api('GET', '/projects');
    assert.equal(limited.status, 429);
    assert.equal(typeof limited.body.message, 'string');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    assert.equal((await apiClient(cp.url, bob.token)('GET', '/projects')).status, 200);
  });

  it('refuses a body over 1 MiB with 413', async () => {
    const res = await apiClient(cp.url, bob.token)('POST', '/projects', JSON.stringify({ name: 'x', description: 'd'.repeat(1_100_000) }));
    assert.equal(res.status, 413);
    assert.equal(typeof res.body.message, 'string');
  });
});
