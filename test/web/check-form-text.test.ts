import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  assertionLinesText,
  extractionsText,
  headerLinesText,
  parseAssertionLines,
  parseExtractions,
  parseHeaderLines,
  parseTarget,
  targetText,
} from '../../control-plane/src/web/check-form-text.ts';

describe("the monitor form's text forms of a check", () => {
  it('reads a target as a number where a number is compared, a list for in, text otherwise', () => {
    const rows: [raw: string, source: Parameters<typeof parseTarget>[1], operator: Parameters<typeof parseTarget>[2], expected: unknown][] =
      [
        ['200', 'status_code', 'equals', { target: 200 }],
        [' 1.5 ', 'json', 'less_than', { target: 1.5 }],
        ['12', 'json', 'equals', { target: '12' }],
        ['ok', 'body', 'contains', { target: 'ok' }],
        ['200, 201 ,', 'status_code', 'in', { target: [200, 201] }],
        ['a, b c', 'dns_answer', 'in', { target: ['a', 'b c'] }],
        ['', 'header', 'exists', { target: undefined }],
        ['fast', 'response_time', 'less_than', { target: 'fast', problem: 'A number, such as 200 or 1.5.' }],
        ['200, ok', 'status_code', 'in', { target: ['200', 'ok'], problem: 'status_code is a number: “ok” is not one.' }],
      ];
    for (const [raw, source, operator, expected] of rows)
      assert.deepEqual(parseTarget(raw, source, operator), expected, `${source} ${operator} ${raw}`);
    assert.deepEqual([targetText([200, 201]), targetText(3), targetText('ok'), targetText(undefined)], ['200, 201', '3', 'ok', '']);
  });

  it('reads step headers as Name: value lines, a name alone keeping the stored value', () => {
    const read = parseHeaderLines('Content-Type: application/json\r\n\r\nX-Api-Key\nX-Empty:\nAuthorization: Bearer a:b');
    assert.deepEqual(read.items, [
      { name: 'Content-Type', value: 'application/json' },
      { name: 'X-Api-Key', value: null },
      { name: 'X-Empty', value: '' },
      { name: 'Authorization', value: 'Bearer a:b' },
    ]);
    assert.deepEqual(read.lines, [1, 3, 4, 5]);
    assert.deepEqual(parseHeaderLines(headerLinesText(read.items)).items, read.items);
    assert.deepEqual(parseHeaderLines(': value').problems, ['Line 1: write a header as Name: value.']);
  });

  it('reads extractions from json, a header or the body, and gives them back as written', () => {
    const text = 'token = json $.data.token\nid = header x-request-id\nn = body /id=(\\d+)/';
    const read = parseExtractions(text);
    assert.deepEqual(read.items, [
      { name: 'token', source: 'json', path: '$.data.token' },
      { name: 'id', source: 'header', path: 'x-request-id' },
      { name: 'n', source: 'body', path: 'id=(\\d+)' },
    ]);
    assert.equal(extractionsText(read.items), text);
    assert.deepEqual(parseExtractions('n = body id=(\\d+)').items, [{ name: 'n', source: 'body', path: 'id=(\\d+)' }], 'slashes optional');
    assert.deepEqual(parseExtractions('ok = json $.a\n1x = json $.b\nt = cookie sid').problems, [
      'Line 2: write name = json $.path, name = header Header-Name or name = body /pattern/.',
      'Line 3: write name = json $.path, name = header Header-Name or name = body /pattern/.',
    ]);
  });

  it('reads step assertions as lines, a path only for json and header, degraded: for the severity', () => {
    const text =
      'status_code equals 201\njson $.items[0].id exists\nheader content-type contains json\ndegraded: response_time less_than 800\nbody matches ^OK( now)?$';
    const read = parseAssertionLines(text);
    assert.deepEqual(read.items, [
      { source: 'status_code', operator: 'equals', target: 201, severity: 'down' },
      { source: 'json', path: '$.items[0].id', operator: 'exists', severity: 'down' },
      { source: 'header', path: 'content-type', operator: 'contains', target: 'json', severity: 'down' },
      { source: 'response_time', operator: 'less_than', target: 800, severity: 'degraded' },
      { source: 'body', operator: 'matches', target: '^OK( now)?$', severity: 'down' },
    ]);
    assert.equal(assertionLinesText(read.items), text);
    assert.deepEqual(parseAssertionLines('latency less_than 5\nstatus_code is 200\nstatus_code less_than soon').problems, [
      'Line 1: “latency” is not something to check: use status_code, response_time, body, json, header, certificate_days, dns_answer, packet_loss, grpc_status.',
      'Line 2: “is” is not an operator: use equals, not_equals, contains, not_contains, matches, not_matches, less_than, less_or_equal, greater_than, greater_or_equal, exists, not_exists, in.',
      'Line 3: A number, such as 200 or 1.5.',
    ]);
  });
});
