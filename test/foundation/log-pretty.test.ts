import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { isRoutineRequest, routineOutcomeLevel } from '../../shared/src/health.ts';
import { formatRecord, newPrettyState } from '../../shared/src/log-pretty.ts';
import { createLogger } from '../../shared/src/logger.ts';

const at = new Date(2026, 10, 26, 9, 5, 7).toISOString();

describe('readable log lines', () => {
  const rows: [string, Record<string, unknown>, string][] = [
    ['a plain message', { level: 30, time: at, pid: 1, msg: 'ingest started' }, '09:05:07 INFO  ingest started'],
    [
      'a component and fields',
      { level: 30, time: at, pid: 1, component: 'assigner', regions: ['local'], puts: 0, msg: 'assignments reconciled' },
      '09:05:07 INFO  [assigner] assignments reconciled  regions=["local"] puts=0',
    ],
    [
      'a string with spaces, quoted',
      { level: 40, time: at, step: 'the probe agent', msg: 'stopping failed' },
      '09:05:07 WARN  stopping failed  step="the probe agent"',
    ],
    [
      'an error at warn: its message only',
      { level: 40, time: at, err: { message: 'connect ECONNREFUSED', stack: 'Error: connect\n    at x' }, msg: 'reconcile failed' },
      '09:05:07 WARN  reconcile failed  err="connect ECONNREFUSED"',
    ],
    [
      'an error at error: its stack below',
      { level: 50, time: at, err: { message: 'boom', stack: 'Error: boom\n    at y' }, msg: 'shutdown failed' },
      '09:05:07 ERROR shutdown failed  err=boom\n    Error: boom\n        at y',
    ],
    [
      'a completed request that carries its request',
      {
        level: 30,
        time: at,
        component: 'api',
        reqId: 'r2',
        req: { method: 'GET', url: '/healthz' },
        res: { statusCode: 503 },
        responseTime: 2.4,
        msg: 'request completed',
      },
      '09:05:07 INFO  [api] GET /healthz 503 2 ms',
    ],
  ];
  for (const [name, rec, expected] of rows) it(name, () => assert.equal(formatRecord(rec, newPrettyState(), false), expected));

  it('prints a request once, when it completes, with its method and URL', () => {
    const state = newPrettyState();
    const incoming = {
      level: 30,
      time: at,
      component: 'api',
      reqId: 'r1',
      req: { method: 'POST', url: '/monitors' },
      msg: 'incoming request',
    };
    assert.equal(formatRecord(incoming, state, false), undefined);
    const done = {
      level: 30,
      time: at,
      component: 'api',
      reqId: 'r1',
      res: { statusCode: 201 },
      responseTime: 12.3,
      msg: 'request completed',
    };
    assert.equal(formatRecord(done, state, false), '09:05:07 INFO  [api] POST /monitors 201 12 ms');
    assert.equal(state.requests.size, 0);
  });

  it('colours the level in a terminal', () => {
    assert.ok(formatRecord({ level: 50, time: at, msg: 'x' }, newPrettyState(), true)!.includes('\x1b[31mERROR\x1b[0m'));
  });

  it('writes readable lines through createLogger, still without secrets', () => {
    const lines: string[] = [];
    const out = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const log = createLogger({ level: 'info', destination: out, pretty: true });
    log.child({ component: 'api' }).info({ token: 'upt_secret1', port: 3000 }, 'listening');
    assert.match(lines.join(''), /^\d\d:\d\d:\d\d INFO {2}\[api\] listening {2}token=\[redacted\] port=3000\n$/);
    assert.doesNotMatch(lines.join(''), /secret1/);
  });

  it('writes JSON to anything that is not a terminal', () => {
    const lines: string[] = [];
    const out = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    createLogger({ level: 'info', destination: out }).info('hello');
    assert.equal(JSON.parse(lines[0]!).msg, 'hello');
  });
});

describe('routine requests, logged at debug', () => {
  const rows: [string, boolean][] = [
    ['/healthz', true],
    ['/readyz?verbose=1', true],
    ['/metrics', true],
    ['/heartbeat/5b0c2f0e-1111-4222-8333-444455556666', true],
    ['/heartbeat/5b0c2f0e-1111-4222-8333-444455556666/fail', true],
    ['/app/monitors?fragment=1&page=2', true],
    ['/app/monitors?page=2&fragment=1', true],
    ['/app/monitors?page=2', false],
    ['/app/monitors?fragment=10', false],
    ['/heartbeats/5b0c2f0e/pings', false],
    ['/api/notify/abc', false],
    ['/monitors', false],
    ['/metricsx', false],
  ];
  for (const [url, routine] of rows) it(`${url} is ${routine ? '' : 'not '}routine`, () => assert.equal(isRoutineRequest(url), routine));

  const levels: [number, string][] = [
    [200, 'debug'],
    [304, 'debug'],
    [404, 'info'],
    [429, 'info'],
    [503, 'warn'],
  ];
  for (const [status, level] of levels) it(`logs a routine ${status} at ${level}`, () => assert.equal(routineOutcomeLevel(status), level));
});
