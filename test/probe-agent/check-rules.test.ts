import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CANCELLED, TIMED_OUT } from '../../probe-agent/src/check/abort.ts';
import { checkFailure } from '../../probe-agent/src/check/classify.ts';
import { authorizationHeader, InvalidTargetError, parseUrl, redirectMethod } from '../../probe-agent/src/check/target-url.ts';
import { checkTimings, newHop } from '../../probe-agent/src/check/timings.ts';

const basic = (userPass: string) => `Basic ${Buffer.from(userPass).toString('base64')}`;
const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });

describe('check rules', () => {
  it('chooses the method after a redirect as browsers do', () => {
    const rows: Array<[number, string, string]> = [
      [301, 'GET', 'GET'],
      [301, 'POST', 'GET'],
      [301, 'PUT', 'PUT'],
      [302, 'POST', 'GET'],
      [302, 'DELETE', 'DELETE'],
      [303, 'POST', 'GET'],
      [303, 'PUT', 'GET'],
      [303, 'HEAD', 'HEAD'],
      [307, 'POST', 'POST'],
      [308, 'POST', 'POST'],
    ];
    for (const [status, method, expected] of rows) {
      assert.equal(redirectMethod(status, method), expected, `${status} after ${method}`);
    }
  });

  it('takes basic-auth credentials from the explicit fields first, then from the URL', () => {
    const rows: Array<[string | null, string | null, string, string | null]> = [
      [null, null, 'http://x/', null],
      ['ann', 'secret', 'http://x/', basic('ann:secret')],
      ['ann', null, 'http://x/', basic('ann:')],
      ['ann', 'secret', 'http://bob:other@x/', basic('ann:secret')],
      [null, null, 'http://b%40b:p%3Ass@x/', basic('b@b:p:ss')],
      [null, 'ignored', 'http://bob@x/', basic('bob:')],
    ];
    for (const [user, password, url, expected] of rows) {
      assert.equal(authorizationHeader({ basic_auth_username: user, basic_auth_password: password }, new URL(url)), expected, url);
    }
  });

  it('refuses a target or redirect location that is not an http(s) URL', () => {
    const rows: Array<[string, URL | undefined, string]> = [
      ['not a url', undefined, 'Invalid URL'],
      ['ftp://x/', undefined, 'Unsupported URL scheme ftp:'],
      ['http://[::1', new URL('http://x/'), 'Invalid redirect location http://[::1'],
      ['file:///etc/passwd', new URL('http://x/'), 'Unsupported URL scheme file:'],
    ];
    for (const [raw, base, message] of rows) {
      assert.throws(
        () => parseUrl(raw, base),
        (err) => err instanceof InvalidTargetError && err.message === message,
        raw,
      );
    }
    assert.equal(parseUrl('/next?a=1', new URL('https://x/start')).href, 'https://x/next?a=1');
  });

  it('names why a check failed: its time limit and cancellation before what the transport said', () => {
    const rows: Array<[unknown, symbol | null, { class: string; message: string }]> = [
      [refused, TIMED_OUT, { class: 'timeout', message: 'Timed out after 2000 ms' }],
      [refused, CANCELLED, { class: 'other', message: 'Check cancelled' }],
      [new InvalidTargetError('Invalid URL'), null, { class: 'other', message: 'Invalid URL' }],
      [refused, null, { class: 'refused', message: 'Connection refused' }],
    ];
    for (const [err, reason, expected] of rows) assert.deepEqual(checkFailure(err, reason, 2_000), expected);
  });

  it('adds up the phases of every hop and leaves out the answer time of a hop that got none', () => {
    const first = { ...newHop(), phases: { dns: 1.0004, connect: 2, tls: 3 }, startedAt: 10, headersAt: 15.5, status: 302 };
    const second = { ...newHop(), phases: { dns: 0, connect: 1.25, tls: 0 }, startedAt: 20, headersAt: 21, status: 200 };
    const unanswered = { ...newHop(), startedAt: 30 };
    assert.deepEqual(checkTimings([first, second, unanswered], 5, 40.12345), { dns: 1, connect: 3.25, tls: 3, ttfb: 6.5, total: 35.123 });
    assert.deepEqual(checkTimings([], 5, 5), { dns: 0, connect: 0, tls: 0, ttfb: 0, total: 0 });
  });
});
