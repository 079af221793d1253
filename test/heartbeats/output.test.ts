import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { judgeContent, type ContentSettings, type ContentVerdict, type PingContent } from '../../control-plane/src/heartbeats/output.ts';

const plain: ContentSettings = { success_exit_codes: [0], output_rules: [] };
const rules: ContentSettings = {
  success_exit_codes: [0],
  output_rules: [
    { match: 'contains', value: 'ERROR', outcome: 'fail' },
    { match: 'regex', value: '(?i)\\bfailed to connect\\b', outcome: 'fail' },
    { match: 'contains', value: 'nothing to do', outcome: 'success' },
  ],
};
const ping = (kind: PingContent['kind'], body = '', exit_code: number | null = null): PingContent => ({ kind, body, exit_code });
const as = (kind: ContentVerdict['kind'], reason: ContentVerdict['reason'] = null): ContentVerdict => ({ kind, reason });

const rows: { name: string; settings: ContentSettings; ping: PingContent; expect: ContentVerdict }[] = [
  { name: 'a success stays a success with no rules', settings: plain, ping: ping('success', 'ERROR'), expect: as('success') },
  { name: 'exit code 0 is a success by default', settings: plain, ping: ping('success', '', 0), expect: as('success') },
  { name: 'exit code 1 is a failure by default', settings: plain, ping: ping('fail', '', 1), expect: as('fail') },
  {
    name: 'an exit code listed in success_exit_codes is a success',
    settings: { ...plain, success_exit_codes: [0, 1] },
    ping: ping('fail', '', 1),
    expect: as('success'),
  },
  {
    name: 'exit code 0 is a failure when success_exit_codes leaves it out',
    settings: { ...plain, success_exit_codes: [3] },
    ping: ping('success', '', 0),
    expect: as('fail'),
  },
  { name: 'a /start is never judged', settings: rules, ping: ping('start', 'ERROR'), expect: as('start') },
  {
    name: 'a success whose output contains a fail keyword fails',
    settings: rules,
    ping: ping('success', 'backup: ERROR disk full'),
    expect: as('fail', 'output'),
  },
  { name: 'contains is case-sensitive', settings: rules, ping: ping('success', 'backup: error disk full'), expect: as('success') },
  {
    name: 'a fail regex matches case-insensitively when it says so',
    settings: rules,
    ping: ping('success', 'db: Failed To Connect'),
    expect: as('fail', 'output'),
  },
  { name: 'a regex needs its word boundaries', settings: rules, ping: ping('success', 'db: failed to connection'), expect: as('success') },
  {
    name: 'a failure whose output matches a success rule succeeds',
    settings: rules,
    ping: ping('fail', 'sync: nothing to do'),
    expect: as('success', 'output'),
  },
  { name: 'a failure stays one when only fail rules match', settings: rules, ping: ping('fail', 'ERROR'), expect: as('fail') },
  { name: 'a success rule does not touch a success', settings: rules, ping: ping('success', 'nothing to do'), expect: as('success') },
  { name: 'an empty output matches no rule', settings: rules, ping: ping('success', ''), expect: as('success') },
  {
    name: 'a non-zero exit code with a success rule in its output succeeds',
    settings: rules,
    ping: ping('fail', 'exit 2: nothing to do', 2),
    expect: as('success', 'output'),
  },
  {
    name: 'an exit code 0 whose output has a fail keyword fails',
    settings: rules,
    ping: ping('success', 'done with ERROR', 0),
    expect: as('fail', 'output'),
  },
];

describe('judgeContent', () => {
  for (const row of rows) {
    it(row.name, () => assert.deepEqual(judgeContent(row.settings, row.ping), row.expect));
  }
  it('finds a keyword past the first kilobytes of a long output', () => {
    assert.deepEqual(judgeContent(rules, ping('success', `${'x'.repeat(90_000)}ERROR`)), as('fail', 'output'));
  });
});
