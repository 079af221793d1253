import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { integrationTypes } from '../../shared/src/contracts/notify.ts';
import { configFields, readConfig } from '../../control-plane/src/web/config-fields.ts';

const fieldOf = (type: Parameters<typeof configFields>[0], name: string) => configFields(type).find((f) => f.name === name);

describe('integration settings as form fields', () => {
  const rows: [type: Parameters<typeof configFields>[0], name: string, expected: Record<string, unknown>][] = [
    ['webhook', 'url', { kind: 'secret', required: true, options: [], placeholder: '', help: 'An http or https URL.' }],
    ['webhook', 'secret', { kind: 'secret', required: false, placeholder: '' }],
    ['webhook', 'headers', { kind: 'lines', required: false, help: 'Write-only: extra request headers (often credentials).' }],
    ['email', 'recipients', { kind: 'list', required: true, help: undefined }],
    ['email', 'from', { kind: 'text', required: false, help: 'Sender (default: the SMTP_FROM setting).' }],
    [
      'pagerduty',
      'severity',
      { kind: 'select', required: false, options: ['critical', 'error', 'warning', 'info'], placeholder: 'critical' },
    ],
    ['pagerduty', 'events_url', { kind: 'text', required: false, placeholder: 'https://events.pagerduty.com/v2/enqueue' }],
    // A default over a transform (base URLs lose their trailing slashes).
    ['telegram', 'api_base_url', { kind: 'text', required: false, placeholder: 'https://api.telegram.org' }],
    ['ntfy', 'server', { kind: 'text', required: false, placeholder: 'https://ntfy.sh' }],
    ['telegram', 'chat_id', { kind: 'text', required: true, placeholder: '' }],
    ['telegram', 'bot_token', { kind: 'secret', required: true }],
  ];
  for (const [type, name, expected] of rows) {
    it(`reads ${type}.${name} as ${String(expected.kind)}${expected.required ? ', required' : ''}`, () => {
      const field = fieldOf(type, name);
      assert.ok(field, `${type} has a ${name} setting`);
      for (const [key, value] of Object.entries(expected))
        assert.deepEqual(field[key as keyof typeof field], value, `${type}.${name}.${key}`);
    });
  }

  it('gives every setting of every type a field', () => {
    for (const type of integrationTypes) assert.ok(configFields(type).length > 0, type);
  });

  it('reads lists and header lines back as the API takes them, leaving out empty fields', () => {
    assert.deepEqual(readConfig('email', { 'config.recipients': 'a@example.test, b@example.test', 'config.from': ' ' }), {
      recipients: ['a@example.test', 'b@example.test'],
    });
    assert.deepEqual(readConfig('webhook', { 'config.url': 'https://example.test/hook', 'config.headers': 'X-A: 1\nX-B:two' }), {
      url: 'https://example.test/hook',
      headers: { 'X-A': '1', 'X-B': 'two' },
    });
  });
});
