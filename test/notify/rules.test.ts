import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { afterFailure } from '../../control-plane/src/notifications/backoff.ts';
import { formatDuration, messageFor } from '../../control-plane/src/notifications/content.ts';
import { isPermanentStatus } from '../../control-plane/src/notifications/channels/http.ts';
import { maskUrl } from '../../control-plane/src/notifications/integrations/config.ts';
import { scrub } from '../../control-plane/src/notifications/errors.ts';

describe('what follows a failed attempt', () => {
  const backoff = { baseMs: 1_000, capMs: 60_000 };
  const rows: [string, number, number, { permanent: boolean; retryAfterMs?: number }, ReturnType<typeof afterFailure>][] = [
    ['retries the first failure after the base', 1, 8, { permanent: false }, { kind: 'retry', delayMs: 1_000 }],
    ['doubles the wait each time', 2, 8, { permanent: false }, { kind: 'retry', delayMs: 2_000 }],
    ['doubles again', 4, 8, { permanent: false }, { kind: 'retry', delayMs: 8_000 }],
    ['caps the wait', 7, 8, { permanent: false }, { kind: 'retry', delayMs: 60_000 }],
    ['gives up when the attempts are used up', 8, 8, { permanent: false }, { kind: 'dead' }],
    ['gives up past the last attempt too', 9, 8, { permanent: false }, { kind: 'dead' }],
    ['gives up at once on a permanent failure', 1, 8, { permanent: true }, { kind: 'dead' }],
    ['waits longer when the receiver asks to', 1, 8, { permanent: false, retryAfterMs: 30_000 }, { kind: 'retry', delayMs: 30_000 }],
    [
      'keeps its own wait when the receiver asks for less',
      3,
      8,
      { permanent: false, retryAfterMs: 100 },
      { kind: 'retry', delayMs: 4_000 },
    ],
    ['caps what the receiver asks for', 1, 8, { permanent: false, retryAfterMs: 3_600_000 }, { kind: 'retry', delayMs: 60_000 }],
    ['with one attempt allowed, never retries', 1, 1, { permanent: false }, { kind: 'dead' }],
  ];
  for (const [name, attempt, max, failure, expected] of rows) {
    it(name, () => assert.deepEqual(afterFailure(attempt, max, failure, backoff), expected));
  }
});

describe('which HTTP answers are final', () => {
  const rows: [number, boolean][] = [
    [400, true],
    [401, true],
    [403, true],
    [404, true],
    [410, true],
    [413, true],
    [301, true],
    [408, false],
    [429, false],
    [500, false],
    [502, false],
    [503, false],
  ];
  for (const [status, permanent] of rows) {
    it(`treats ${status} as ${permanent ? 'permanent' : 'worth a retry'}`, () => assert.equal(isPermanentStatus(status), permanent));
  }
});

describe('notification texts', () => {
  const durations: [number, string][] = [
    [0, '0s'],
    [45, '45s'],
    [60, '1m'],
    [305, '5m 5s'],
    [3_600, '1h'],
    [7_260, '2h 1m'],
    [90_061, '1d 1h'],
  ];
  for (const [seconds, text] of durations) it(`writes ${seconds} s as "${text}"`, () => assert.equal(formatDuration(seconds), text));

  const subject = (type: 'monitor' | 'heartbeat') => ({ type, id: '00000000-0000-4000-8000-000000000000', name: 'Api' });
  const messages: [string, Parameters<typeof messageFor>[0], string][] = [
    [
      'a monitor down with its cause and regions',
      { kind: 'monitor.down', subject: subject('monitor'), data: { cause: 'timeout after 10 s', regions: ['eu', 'us'] } },
      'Monitor "Api" is down: timeout after 10 s. Failing regions: eu, us.',
    ],
    [
      'a monitor down without details',
      { kind: 'monitor.down', subject: subject('monitor'), data: {} },
      'Monitor "Api" is down: checks are failing.',
    ],
    [
      'a monitor up with the incident length',
      { kind: 'monitor.up', subject: subject('monitor'), data: { duration_seconds: 65 } },
      'Monitor "Api" is up again after 1m 5s.',
    ],
    [
      'a heartbeat that missed its ping',
      { kind: 'heartbeat.down', subject: subject('heartbeat'), data: { reason: 'missed' } },
      'Heartbeat "Api" is down: no ping arrived within the grace period.',
    ],
    [
      'a heartbeat whose job failed, with its exit code',
      { kind: 'heartbeat.down', subject: subject('heartbeat'), data: { reason: 'failed', ping: { kind: 'fail', exit_code: 3 } } },
      'Heartbeat "Api" is down: the job reported a failure (exit code 3).',
    ],
    [
      'a heartbeat whose job never finished',
      { kind: 'heartbeat.down', subject: subject('heartbeat'), data: { reason: 'start_timeout' } },
      'Heartbeat "Api" is down: the job started but did not finish within the grace period.',
    ],
    [
      'a heartbeat whose job ran past its maximum run time',
      { kind: 'heartbeat.down', subject: subject('heartbeat'), data: { reason: 'too_long' } },
      'Heartbeat "Api" is down: the job started but did not finish within its maximum run time.',
    ],
    [
      'a heartbeat whose job was too short, with how long it ran',
      {
        kind: 'heartbeat.down',
        subject: subject('heartbeat'),
        data: { reason: 'too_short', ping: { kind: 'success', exit_code: null, run_duration_seconds: 4.23 } },
      },
      'Heartbeat "Api" is down: the job finished sooner than its minimum run time (ran 4.2 s).',
    ],
    [
      'a heartbeat whose job ran too often',
      { kind: 'heartbeat.down', subject: subject('heartbeat'), data: { reason: 'too_frequent' } },
      'Heartbeat "Api" is down: the job ran again too soon after its last success.',
    ],
    [
      "a heartbeat whose job's output failed it",
      { kind: 'heartbeat.down', subject: subject('heartbeat'), data: { reason: 'output' } },
      'Heartbeat "Api" is down: the job\'s output matched a failure rule.',
    ],
    [
      'a heartbeat back up',
      { kind: 'heartbeat.up', subject: subject('heartbeat'), data: { duration_seconds: 3_600 } },
      'Heartbeat "Api" is up again after 1h.',
    ],
    ...(
      [
        [29.9, 'expires in 29 days (on 2030-04-30).'],
        [1.2, 'expires in 1 day (on 2030-04-30).'],
        [0.4, 'expires within a day (on 2030-04-30).'],
        [-0.1, 'expired on 2030-04-30.'],
      ] as const
    ).map(([days_left, text]): [string, Parameters<typeof messageFor>[0], string] => [
      `a certificate with ${days_left} days left`,
      {
        kind: 'monitor.certificate_expiring',
        subject: subject('monitor'),
        data: { certificate: { valid_to: '2030-04-30T08:00:00.000Z', days_left }, threshold_days: 30 },
      },
      `Certificate of "Api" ${text}`,
    ]),
    [
      'a domain registration running out',
      {
        kind: 'monitor.domain_expiring',
        subject: subject('monitor'),
        data: { domain: { name: 'example.com', expires_at: '2030-05-01T00:00:00.000Z', days_left: 6.5 }, threshold_days: 7 },
      },
      'Domain example.com of "Api" expires in 6 days (on 2030-05-01).',
    ],
  ];
  for (const [name, event, text] of messages) it(`words ${name}`, () => assert.equal(messageFor(event), text));
});

describe('secrets in what is shown', () => {
  it('masks a secret URL down to its host and last characters', () => {
    assert.equal(maskUrl('https://hooks.slack.com/services/T0/B0/abcdefgh'), 'https://hooks.slack.com/…efgh');
    assert.equal(maskUrl('smtp://user:pass@mail.example.com:587'), 'smtp://mail.example.com:587/');
    assert.equal(maskUrl('not a url'), '…');
  });

  it('removes every secret from an error text', () => {
    assert.equal(scrub('POST /bot123:abcdef failed for abcdef', ['123:abcdef']), 'POST /bot[redacted] failed for abcdef');
    assert.equal(scrub('x'.repeat(2000), []).length, 1001);
  });
});
