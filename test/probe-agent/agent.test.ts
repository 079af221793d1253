import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import { resultMsgId } from '../../shared/src/contracts/monitoring.ts';
import { keyToText, seal } from '../../shared/src/crypto.ts';
import { ensureStreams, openBucket } from '../../shared/src/provision.ts';
import { userAgent } from '../../shared/src/version.ts';
import { phaseOf } from '../../probe-agent/src/schedule/scheduler.ts';
import type { AgentOptions, RunningAgent } from '../../probe-agent/src/agent.ts';
import { createTestNats, type TestNats } from '../harness/nats.ts';
import { startTarget, type Target } from '../harness/http.ts';
import { agentConfig, assign, assignment, eventually, runAgent, slotMs, storedCount, storedResults } from './agent-helpers.ts';

describe('probe agent checks', () => {
  let nats: TestNats;
  let kv: KV;
  const running: Array<RunningAgent | Target> = [];
  const target = async (answer?: Parameters<typeof startTarget>[0]) => {
    const t = await startTarget(answer);
    running.push(t);
    return t;
  };
  const agent = async (region: string, extra: Partial<AgentOptions> = {}) => {
    const a = await runAgent({ config: agentConfig(nats.namespace), nc: nats.nc, region, ...extra });
    running.push(a);
    return a;
  };

  before(async () => {
    nats = await createTestNats();
    await ensureStreams(nats.nc, nats.names, { replicas: 1 });
    kv = await openBucket(nats.nc, nats.names, 'assignments', { replicas: 1 });
  });
  after(async () => {
    for (const r of running.reverse()) await ('stop' in r ? r.stop() : r.close());
    await nats.close();
  });

  it('checks an assigned monitor and publishes each slot to RESULTS under its msg id', async () => {
    const site = await target();
    const a = assignment({ region: 'basic', url: `${site.url}/health?x=1` });
    await assign(kv, nats.names, a);
    const probe = await agent('basic');
    const subject = nats.names.subjects.result('basic', a.monitor_id);
    await eventually(async () => (await storedCount(nats.nc, nats.names, subject)) >= 3, '3 results');

    const stored = await storedResults(nats.nc, nats.names, subject);
    for (const { msgId, result } of stored) {
      assert.equal(msgId, resultMsgId(result));
      assert.equal(result.monitor_id, a.monitor_id);
      assert.equal(result.region, 'basic');
      assert.equal(result.agent_id, probe.agentId);
      assert.equal(result.ok, true);
      assert.equal(result.status_code, 200);
      assert.equal(result.error, null);
      assert.equal(result.attempts, 1);
      const slot = Date.parse(result.scheduled_at);
      assert.equal(slot % slotMs, phaseOf(a.monitor_id, slotMs), 'slot on the phase of the monitor id');
      assert.ok(Date.parse(result.checked_at) >= slot);
      assert.ok(result.timings.total > 0);
    }
    const slots = stored.map((s) => Date.parse(s.result.scheduled_at));
    assert.deepEqual(
      slots.slice(1).map((s, i) => s - slots[i]!),
      Array(slots.length - 1).fill(slotMs),
    );

    const req = site.requests[0]!;
    assert.equal(req.method, 'GET');
    assert.equal(req.url, '/health?x=1');
    assert.equal(req.headers['user-agent'], userAgent);
    assert.ok(probe.stats().checks >= 3);
    assert.ok(probe.stats().published >= 3);
  });

  it('applies a new interval and a new url from the next slot', async () => {
    const before = await target();
    const after = await target();
    const a = assignment({ region: 'update', url: before.url });
    await assign(kv, nats.names, a);
    await agent('update');
    await before.waitForRequests(2);

    const changedAt = Date.now();
    await assign(kv, nats.names, { ...a, url: after.url, interval: 10 });
    await after.waitForRequests(1);
    const beforeCount = before.requests.length;
    await after.waitForRequests(3);
    assert.equal(before.requests.length, beforeCount, 'the old url is no longer checked');

    const subject = nats.names.subjects.result('update', a.monitor_id);
    const newSlots = await eventually(async () => {
      const slots = (await storedResults(nats.nc, nats.names, subject))
        .map((s) => Date.parse(s.result.scheduled_at))
        .filter((t) => t > changedAt);
      return slots.length >= 3 && slots;
    }, 'three results on the new grid');
    assert.deepEqual(
      newSlots.slice(1).map((t, i) => t - newSlots[i]!),
      Array(newSlots.length - 1).fill(2 * slotMs),
    );
    assert.equal(newSlots[0]! % (2 * slotMs), phaseOf(a.monitor_id, 2 * slotMs));
  });

  it('stops checking a monitor whose assignment was deleted', async () => {
    const dropped = await target();
    const kept = await target();
    const a = assignment({ region: 'delete', url: dropped.url });
    const b = assignment({ region: 'delete', url: kept.url });
    await assign(kv, nats.names, a);
    await assign(kv, nats.names, b);
    const probe = await agent('delete');
    await dropped.waitForRequests(1);
    await kept.waitForRequests(1);

    await kv.delete(nats.names.keys.assignment('delete', a.monitor_id));
    await eventually(() => probe.stats().assigned === 1, 'the delete to arrive');
    const droppedCount = dropped.requests.length;
    await kept.waitForRequests(kept.requests.length + 3);
    assert.ok(dropped.requests.length <= droppedCount + 1, 'at most a check already running');
    assert.equal(probe.stats().owned, 1);
  });

  it('ignores invalid assignments without stopping, and picks the key up once it is valid', async () => {
    const site = await target();
    const later = await target();
    const good = assignment({ region: 'invalid', url: site.url });
    const fixed = assignment({ region: 'invalid', url: later.url });
    const keyOf = (id: string) => nats.names.keys.assignment('invalid', id);
    await kv.put(keyOf(fixed.monitor_id), 'not json');
    await kv.put(keyOf(randomUUID()), JSON.stringify({ monitor_id: 'nope', interval: 1 }));
    await kv.put(keyOf(randomUUID()), JSON.stringify(assignment({ region: 'invalid', url: site.url })));
    await assign(kv, nats.names, good);
    const probe = await agent('invalid');

    await site.waitForRequests(2);
    assert.equal(probe.stats().assigned, 1);
    await assign(kv, nats.names, fixed);
    await later.waitForRequests(1);
    assert.equal(probe.stats().assigned, 2);
  });

  it('re-checks a failure once and publishes the confirmed failure with 2 attempts', async () => {
    const site = await target({ status: 503 });
    const a = assignment({ region: 'recheck', url: site.url });
    await assign(kv, nats.names, a);
    await agent('recheck');
    const subject = nats.names.subjects.result('recheck', a.monitor_id);
    await eventually(async () => (await storedCount(nats.nc, nats.names, subject)) >= 1, 'a result');

    const [first] = await storedResults(nats.nc, nats.names, subject);
    assert.equal(first!.result.ok, false);
    assert.equal(first!.result.attempts, 2);
    assert.equal(first!.result.status_code, 503);
    assert.deepEqual(first!.result.error, { class: 'status', message: 'Unexpected status 503' });
    const [one, two] = site.requests;
    assert.ok(two!.at - one!.at >= slotMs / 4 - 5, 're-checked after a short pause');
    assert.ok(two!.at - one!.at < slotMs, 're-checked inside the slot');
    assert.ok(Date.parse(first!.result.checked_at) >= Date.parse(first!.result.scheduled_at) + slotMs / 4 - 5);
  });

  it('publishes a failure that passes its re-check as up, with 2 attempts', async () => {
    const site = await target({ status: 500 });
    const a = assignment({ region: 'flaky', url: site.url });
    await assign(kv, nats.names, a);
    await agent('flaky');
    await site.waitForRequests(1);
    site.respond({ status: 200 });
    const subject = nats.names.subjects.result('flaky', a.monitor_id);
    await eventually(async () => (await storedCount(nats.nc, nats.names, subject)) >= 1, 'a result');
    const [first] = await storedResults(nats.nc, nats.names, subject);
    assert.equal(first!.result.ok, true);
    assert.equal(first!.result.attempts, 2);
    assert.equal(first!.result.status_code, 200);
  });

  it('opens a sealed password with AGENT_KEY and sends it as basic auth', async () => {
    const key = randomBytes(32);
    const site = await target();
    const a = assignment({
      region: 'auth',
      url: site.url,
      basic_auth_username: 'alice',
      basic_auth_password_sealed: seal('s3cret: ü', key),
    });
    await assign(kv, nats.names, a);
    await agent('auth', { config: agentConfig(nats.namespace, { AGENT_KEY: keyToText(key) }) });
    const [req] = await site.waitForRequests(1);
    assert.equal(req!.headers.authorization, `Basic ${Buffer.from('alice:s3cret: ü').toString('base64')}`);
  });

  it('opens a sealed password with a key handed in by the embedding process', async () => {
    const key = randomBytes(32);
    const site = await target();
    const a = assignment({ region: 'authkey', url: site.url, basic_auth_username: 'bob', basic_auth_password_sealed: seal('pw', key) });
    await assign(kv, nats.names, a);
    await agent('authkey', { checkKey: key });
    const [req] = await site.waitForRequests(1);
    assert.equal(req!.headers.authorization, `Basic ${Buffer.from('bob:pw').toString('base64')}`);
  });

  it('fails the check with a clear message when the password cannot be opened', async () => {
    const site = await target();
    const a = assignment({
      region: 'badkey',
      url: site.url,
      basic_auth_username: 'eve',
      basic_auth_password_sealed: seal('pw', randomBytes(32)),
    });
    await assign(kv, nats.names, a);
    const probe = await agent('badkey', { checkKey: randomBytes(32) });
    const subject = nats.names.subjects.result('badkey', a.monitor_id);
    await eventually(async () => (await storedCount(nats.nc, nats.names, subject)) >= 2, 'two results');
    for (const { result } of await storedResults(nats.nc, nats.names, subject)) {
      assert.equal(result.ok, false);
      assert.equal(result.error?.class, 'other');
      assert.match(result.error?.message ?? '', /basic-auth password/);
    }
    assert.equal(site.requests.length, 0, 'nothing sent without the password');
    assert.ok(probe.stats().checks >= 2);
  });
});
