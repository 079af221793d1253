import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { PING_BODY_LIMIT } from '../../shared/src/contracts/pings.ts';
import { pingPartition } from '../../shared/src/pings/partition.ts';
import { apiClient, timestampFormat, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { eventually, readStream } from '../harness/streams.ts';

describe('ping endpoints of the control plane', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  before(async () => {
    // A limit of 120 a minute: the log test below sends 105 pings to one heartbeat at once.
    cp = await startTestControlPlane({ roles: ['api', 'deadline'], env: { PING_RATE_LIMIT: '120' } });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
  });
  after(() => cp.stop());

  const heartbeat = async () =>
    (await api('POST', '/heartbeats', { name: 'Nightly backup', project_id: ada.project_id })).body.data as {
      id: string;
      ping_url: string;
    };
  const call = async (path: string, init?: RequestInit) => {
    const res = await fetch(`${cp.url}${path}`, init);
    return { status: res.status, text: await res.text(), headers: res.headers };
  };
  const pingsOf = async (id: string) =>
    (
      await readStream(
        cp.nats.nc,
        cp.nats.names.streams.pings,
        cp.nats.names.subjects.ping(pingPartition(id, cp.config.PING_PARTITIONS), id),
      )
    ).map((m) => ({ ...m.data, msgId: m.msgId }));
  const logOf = async (id: string, query = '') => (await api('GET', `/heartbeats/${id}/pings${query}`)).body;

  it('answers 200 OK to GET, POST and HEAD, without a token, once the ping is in the PINGS stream', async () => {
    const hb = await heartbeat();
    for (const method of ['GET', 'POST', 'HEAD']) {
      const res = await call(`/heartbeat/${hb.id}`, { method, headers: { 'user-agent': `curl/8 ${method}` } });
      assert.equal(res.status, 200, method);
      assert.equal(res.text, method === 'HEAD' ? '' : 'OK');
      assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
    }
    const pings = await pingsOf(hb.id);
    assert.deepEqual(
      pings.map((p) => p.method),
      ['GET', 'POST', 'HEAD'],
    );
    for (const p of pings) {
      assert.equal(p.heartbeat_id, hb.id);
      assert.equal(p.kind, 'success');
      assert.equal(p.exit_code, null);
      assert.equal(p.region, null);
      assert.equal(p.source, '127.0.0.1');
      assert.equal(p.user_agent, `curl/8 ${p.method}`);
      assert.equal(p.msgId, p.id, 'Nats-Msg-Id is the ping id');
    }
    assert.equal(new Set(pings.map((p) => p.id)).size, 3, 'a new id per request');
  });

  it('serves the ping_url the API hands out', async () => {
    const hb = await heartbeat();
    // Tests listen on a free port, while ping_url names PING_BASE_URL: the path is what must match.
    const path = new URL(hb.ping_url).pathname;
    assert.equal(path, `/heartbeat/${hb.id}`);
    assert.equal((await call(path)).status, 200);
  });

  it('takes /start, /fail and exit codes 0 to 255, and nothing else', async () => {
    const hb = await heartbeat();
    const kinds: Record<string, [string, number | null] | 404> = {
      start: ['start', null],
      fail: ['fail', null],
      '0': ['success', 0],
      '1': ['fail', 1],
      '255': ['fail', 255],
      '256': 404,
      '-1': 404,
      abc: 404,
      'start/again': 404,
    };
    for (const [suffix, expected] of Object.entries(kinds)) {
      const res = await call(`/heartbeat/${hb.id}/${suffix}`, { method: 'POST' });
      assert.equal(res.status, expected === 404 ? 404 : 200, suffix);
    }
    const pings = await pingsOf(hb.id);
    assert.deepEqual(
      pings.map((p) => [p.kind, p.exit_code]),
      Object.values(kinds).filter((k) => k !== 404),
    );
  });

  it('answers 404 to an unknown id, a malformed id and a deleted heartbeat', async () => {
    const hb = await heartbeat();
    assert.deepEqual((({ status, text }) => ({ status, text }))(await call(`/heartbeat/${randomUUID()}`)), {
      status: 404,
      text: 'Not found',
    });
    assert.equal((await call('/heartbeat/not-a-uuid')).status, 404);
    assert.equal((await call(`/heartbeat/${randomUUID()}/fail`, { method: 'POST' })).status, 404);
    assert.equal((await api('DELETE', `/heartbeats/${hb.id}`)).status, 204);
    assert.equal((await call(`/heartbeat/${hb.id}`)).status, 404);
    assert.equal((await call(`/heartbeat/${hb.id}/start`, { method: 'HEAD' })).status, 404);
    assert.deepEqual(await pingsOf(hb.id), []);
  });

  it('answers a crowd of pings arriving together, each by whether its own heartbeat exists', async () => {
    const known = [await heartbeat(), await heartbeat(), await heartbeat()].map((h) => h.id);
    const unknown = [randomUUID(), randomUUID()];
    const gone = (await heartbeat()).id;
    assert.equal((await api('DELETE', `/heartbeats/${gone}`)).status, 204);
    const ids = [...known, ...unknown, gone, ...known];
    const statuses = await Promise.all(ids.map(async (id) => (await call(`/heartbeat/${id}`)).status));
    assert.deepEqual(
      statuses,
      ids.map((id) => (known.includes(id) ? 200 : 404)),
    );
    for (const id of known) assert.equal((await pingsOf(id)).length, 2, 'both pings of a heartbeat stored');
    for (const id of [...unknown, gone]) assert.deepEqual(await pingsOf(id), []);
  });

  it('accepts an id written in upper case', async () => {
    const hb = await heartbeat();
    assert.equal((await call(`/heartbeat/${hb.id.toUpperCase()}`)).status, 200);
    assert.equal((await pingsOf(hb.id)).length, 1);
  });

  it('refuses a heartbeat pinged beyond its rate with 429 and Retry-After, stores none of those pings, and serves other heartbeats as before', async () => {
    const [looping, other] = [await heartbeat(), await heartbeat()];
    const statuses = [];
    for (let i = 0; i < 130; i++) statuses.push((await call(`/heartbeat/${looping.id}`)).status);
    assert.deepEqual(statuses.slice(0, 120), Array(120).fill(200), "a burst up to a minute's worth");
    // The bucket refills at 2 a second while the loop runs: a few more get through, no more.
    assert.ok(statuses.slice(120).filter((s) => s === 429).length >= 5, `then 429: ${statuses.slice(120)}`);
    const refused = await call(`/heartbeat/${looping.id}/fail`);
    assert.equal(refused.status, 429);
    assert.equal(refused.text, 'Too many pings');
    assert.ok(Number(refused.headers.get('retry-after')) >= 1, 'Retry-After in seconds');
    assert.equal((await pingsOf(looping.id)).length, statuses.filter((s) => s === 200).length, 'refused pings are not stored');
    assert.equal((await call(`/heartbeat/${other.id}`)).status, 200);
  });

  it('answers 405 to other methods', async () => {
    const hb = await heartbeat();
    const res = await call(`/heartbeat/${hb.id}`, { method: 'PUT' });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'GET, POST, HEAD');
  });

  it('keeps the first 10 KB of a body of any type, and its full size', async () => {
    const hb = await heartbeat();
    const log = 'x'.repeat(PING_BODY_LIMIT - 2) + 'é' + 'y'.repeat(2_000);
    const big = await call(`/heartbeat/${hb.id}/1`, { method: 'POST', body: log, headers: { 'content-type': 'text/plain' } });
    assert.equal(big.status, 200);
    const json = await call(`/heartbeat/${hb.id}/fail`, {
      method: 'POST',
      body: '{"not json',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(json.status, 200, 'a body is never parsed');
    const form = await call(`/heartbeat/${hb.id}`, {
      method: 'POST',
      body: 'rows=12&took=3s',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(form.status, 200);
    const bare = await call(`/heartbeat/${hb.id}`, { method: 'POST', body: new Blob(['no type']) });
    assert.equal(bare.status, 200);

    const [first, second, third, fourth] = await pingsOf(hb.id);
    assert.equal(first.body, 'x'.repeat(PING_BODY_LIMIT - 2) + 'é', 'cut at 10 KB, on a character boundary');
    assert.equal(first.body_size, Buffer.byteLength(log));
    assert.equal(second.body, '{"not json');
    assert.equal(third.body, 'rows=12&took=3s');
    assert.equal(fourth.body, 'no type');
  });

  it('accepts a body far beyond 10 KB', async () => {
    const hb = await heartbeat();
    const res = await call(`/heartbeat/${hb.id}`, { method: 'POST', body: Buffer.alloc(3 * 1024 * 1024, 'z') });
    assert.equal(res.status, 200);
    const [ping] = await pingsOf(hb.id);
    assert.equal(ping.body.length, PING_BODY_LIMIT);
    assert.equal(ping.body_size, 3 * 1024 * 1024);
  });

  describe('ping log', () => {
    it('lists the pings of a heartbeat newest first, with what the edge saw', async () => {
      const hb = await heartbeat();
      await call(`/heartbeat/${hb.id}/start`, { headers: { 'user-agent': 'cron-wrapper/1' } });
      await call(`/heartbeat/${hb.id}/2`, { method: 'POST', body: 'exit 2: disk full' });
      const log = await eventually(async () => {
        const body = await logOf(hb.id);
        return body.meta.total === 2 && body;
      }, 'two pings logged');
      assert.deepEqual(log.meta, { current_page: 1, per_page: 25, total: 2, last_page: 1 });
      const [newest, oldest] = log.data;
      assert.deepEqual(
        { ...newest, received_at: undefined },
        {
          kind: 'fail',
          exit_code: 2,
          received_at: undefined,
          region: null,
          source: '127.0.0.1',
          method: 'POST',
          user_agent: 'node',
          body: 'exit 2: disk full',
          body_size: 17,
          rid: null,
          outcome: 'fail',
          reason: 'failed',
          duration_seconds: newest.duration_seconds,
        },
      );
      assert.match(newest.received_at, timestampFormat);
      const run = (Date.parse(newest.received_at) - Date.parse(oldest.received_at)) / 1000;
      assert.ok(
        Math.abs(newest.duration_seconds - run) < 1,
        `the run took ${newest.duration_seconds} s from its /start (${run} s by the edge)`,
      );
      assert.deepEqual([oldest.kind, oldest.method, oldest.user_agent, oldest.body], ['start', 'GET', 'cron-wrapper/1', '']);
      const page = await logOf(hb.id, '?per_page=1&page=2');
      assert.deepEqual(page.meta, { current_page: 2, per_page: 1, total: 2, last_page: 2 });
      assert.equal(page.data[0].kind, 'start');
    });

    it('keeps the newest 100 pings of a heartbeat', async () => {
      const hb = await heartbeat();
      for (let i = 0; i < 105; i++) assert.equal((await call(`/heartbeat/${hb.id}`, { method: 'POST', body: `run ${i}` })).status, 200);
      const log = await eventually(async () => {
        const body = await logOf(hb.id, '?per_page=100');
        return body.data[0]?.body === 'run 104' && body;
      }, 'the last ping logged');
      assert.equal(log.meta.total, 100);
      assert.equal(log.data.at(-1).body, 'run 5');
    });

    it('answers 404 for a heartbeat of another tenant, and 401 without a token', async () => {
      const hb = await heartbeat();
      const eve = await createAccount(cp.db.sql);
      const res = await apiClient(cp.url, eve.token)('GET', `/heartbeats/${hb.id}/pings`);
      assert.deepEqual([res.status, res.body], [404, { message: 'Not found' }]);
      assert.equal((await apiClient(cp.url)('GET', `/heartbeats/${hb.id}/pings`)).status, 401);
    });
  });
});
