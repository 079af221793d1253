import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Assertion, type AssertionInput, type MonitorType } from '../../shared/src/contracts/checks.ts';
import { JSONPath } from 'jsonpath-plus';
import {
  assertionProblem,
  assertionVerdict,
  evaluateAssertions,
  readJsonPath,
  type AssertionInputs,
} from '../../shared/src/checks/assertions.ts';

const observed: AssertionInputs = {
  status_code: 200,
  response_time: 180.5,
  body: '{"status":"ok","version":"2.4.1","items":[{"id":7},{"id":9}],"count":"12","nested":{"flag":true}}',
  headers: { 'content-type': 'application/json; charset=utf-8', 'x-cache': 'HIT' },
  certificate_days: 20.75,
  dns_answers: ['192.0.2.10', '192.0.2.11'],
  packet_loss: 33.3,
  grpc_status: 'SERVING',
};

const one = (a: AssertionInput, o: AssertionInputs = observed) => evaluateAssertions([Assertion.parse(a)], o)[0]!;

describe('assertions: each source and operator on what a check observed', () => {
  const table: Array<[string, AssertionInput, boolean, unknown?]> = [
    ['status code equals', { source: 'status_code', operator: 'equals', target: 200 }, true, 200],
    ['status code in a list', { source: 'status_code', operator: 'in', target: [200, 204] }, true],
    ['status code not in a list', { source: 'status_code', operator: 'in', target: [301, 302] }, false],
    ['response time under', { source: 'response_time', operator: 'less_than', target: 300 }, true, 180.5],
    ['response time over the limit', { source: 'response_time', operator: 'less_than', target: 100 }, false],
    ['body contains a keyword', { source: 'body', operator: 'contains', target: '"status":"ok"' }, true],
    ['body does not contain an error', { source: 'body', operator: 'not_contains', target: 'error' }, true],
    ['body matches a pattern', { source: 'body', operator: 'matches', target: '"version":"2\\.\\d+\\.\\d+"' }, true],
    ['body does not match an anchored pattern', { source: 'body', operator: 'matches', target: '^ok$' }, false],
    ['body not_matches', { source: 'body', operator: 'not_matches', target: 'panic|fatal' }, true],
    ['json path equals a string', { source: 'json', path: '$.status', operator: 'equals', target: 'ok' }, true, 'ok'],
    ['json path equals, wrong value', { source: 'json', path: '$.status', operator: 'equals', target: 'down' }, false, 'ok'],
    ['json array element', { source: 'json', path: '$.items[1].id', operator: 'equals', target: 9 }, true, 9],
    ['json numeric string compared as a number', { source: 'json', path: '$.count', operator: 'greater_than', target: 10 }, true],
    ['json exists', { source: 'json', path: '$.nested.flag', operator: 'exists' }, true, true],
    ['json missing path', { source: 'json', path: '$.nope', operator: 'exists' }, false, null],
    ['json not_exists', { source: 'json', path: '$.nope', operator: 'not_exists' }, true],
    ['json recursive descent', { source: 'json', path: '$..id', operator: 'equals', target: 7 }, true],
    ['header equals (name in any case)', { source: 'header', path: 'X-Cache', operator: 'equals', target: 'HIT' }, true],
    ['header contains', { source: 'header', path: 'content-type', operator: 'contains', target: 'json' }, true],
    ['header missing', { source: 'header', path: 'etag', operator: 'exists' }, false],
    ['certificate days above', { source: 'certificate_days', operator: 'greater_than', target: 14 }, true, 20.7],
    ['certificate days below the limit', { source: 'certificate_days', operator: 'greater_or_equal', target: 30 }, false],
    ['dns answer contains an address', { source: 'dns_answer', operator: 'contains', target: '192.0.2.11' }, true],
    ['dns answer lacks an address', { source: 'dns_answer', operator: 'contains', target: '192.0.2.99' }, false],
    [
      'dns answers all in the expected set',
      { source: 'dns_answer', operator: 'in', target: ['192.0.2.10', '192.0.2.11', '192.0.2.12'] },
      true,
    ],
    ['dns answers with one outside the set', { source: 'dns_answer', operator: 'in', target: ['192.0.2.10'] }, false],
    ['packet loss under', { source: 'packet_loss', operator: 'less_or_equal', target: 50 }, true],
    ['grpc status', { source: 'grpc_status', operator: 'equals', target: 'SERVING' }, true],
  ];
  for (const [name, a, passed, seen] of table) {
    it(name, () => {
      const out = one(a);
      assert.equal(out.passed, passed, JSON.stringify(out));
      if (seen !== undefined) assert.deepEqual(out.observed, seen);
      if (!passed) assert.ok(out.message && out.message.length > 0);
    });
  }

  it('a json assertion on a body that is not JSON fails and says so', () => {
    const out = one({ source: 'json', path: '$.a', operator: 'exists' }, { body: '<html>' });
    assert.equal(out.passed, false);
    assert.equal(out.message, 'The body is not JSON');
  });

  it('an assertion on a source the check did not observe fails with nothing to read', () => {
    const out = one({ source: 'certificate_days', operator: 'greater_than', target: 7 }, { status_code: 200 });
    assert.equal(out.passed, false);
    assert.match(out.message ?? '', /Nothing to read/);
  });

  it('a pattern that backtracks catastrophically elsewhere runs in linear time on RE2', () => {
    const out = one({ source: 'body', operator: 'matches', target: '^(a+)+$' }, { body: `${'a'.repeat(50_000)}!` });
    assert.equal(out.passed, false);
  });

  it('observed text is cut to 200 characters', () => {
    const out = one({ source: 'body', operator: 'contains', target: 'zzz' }, { body: 'x'.repeat(5_000) });
    assert.equal(String(out.observed).length, 200);
  });

  it('the verdict: a failing down assertion fails the check, a failing degraded one degrades it', () => {
    const outs = evaluateAssertions(
      [
        Assertion.parse({ source: 'response_time', operator: 'less_than', target: 100, severity: 'degraded' }),
        Assertion.parse({ source: 'status_code', operator: 'equals', target: 200 }),
      ],
      observed,
    );
    const v = assertionVerdict(outs);
    assert.equal(v.failed, null);
    assert.equal(v.degraded?.source, 'response_time');
    const down = assertionVerdict(
      evaluateAssertions([Assertion.parse({ source: 'body', operator: 'contains', target: 'nope' })], observed),
    );
    assert.equal(down.failed?.source, 'body');
  });
});

describe('JSON paths: a simple path is read as the JSONPath engine reads it', () => {
  const docs: unknown[] = [
    { status: 'ok', count: 0, empty: '', none: null, flag: false, data: { items: [{ id: 7 }, { id: 8, tags: ['a'] }], length: 3 } },
    [{ id: 1 }, 'two', [3, 4]],
    { '0': 'zero', items: 'text', nested: { deeper: { deepest: [null, { x: 1 }] } } },
    { a: { b: 0 }, c: [] },
  ];
  const paths = [
    '$.status',
    '$.count',
    '$.empty',
    '$.none',
    '$.flag',
    '$.missing',
    '$.data.items[0].id',
    '$.data.items[1].tags[0]',
    '$.data.items[2].id',
    '$.data.items.length',
    '$.data.length',
    '$[0].id',
    '$[1]',
    '$[2][1]',
    '$[1].length',
    '$[5]',
    '$.items.length',
    '$.items[0]',
    '$.nested.deeper.deepest[1].x',
    '$.nested.deeper.deepest[0]',
    '$.a.b',
    '$.a.b.c',
    '$.c[0]',
    '$.status.length',
    '$.count.toFixed',
    '$.status.constructor',
    '$[0]',
    '$.data.items[01]',
    // Not simple: left to the engine, the same either way.
    '$',
    '$.data.items[*].id',
    '$..id',
    '$.data.items[-1:]',
    "$['status']",
    '$.data.items[0,1].id',
  ];
  for (const [i, doc] of docs.entries()) {
    it(`document ${i + 1}: every path finds what jsonpath-plus finds`, () => {
      for (const path of paths) {
        assert.deepEqual(readJsonPath(path, doc), JSONPath({ path, json: doc as object, eval: false, wrap: true }), path);
      }
    });
  }
});

describe('assertions: validation names the field', () => {
  const table: Array<[string, AssertionInput, MonitorType, string | undefined]> = [
    ['a valid json assertion', { source: 'json', path: '$.status', operator: 'equals', target: 'ok' }, 'http', undefined],
    ['json without a path', { source: 'json', operator: 'equals', target: 'ok' }, 'http', 'path'],
    ['json path not starting with $', { source: 'json', path: 'status', operator: 'exists' }, 'http', 'path'],
    ['json path with a filter script', { source: 'json', path: '$..[?(@.x)]', operator: 'exists' }, 'http', 'path'],
    ['a header name with a space', { source: 'header', path: 'x cache', operator: 'exists' }, 'http', 'path'],
    ['exists with a target', { source: 'body', operator: 'exists', target: 'x' }, 'http', 'target'],
    ['equals without a target', { source: 'body', operator: 'equals' }, 'http', 'target'],
    ['a comparison with a string', { source: 'response_time', operator: 'less_than', target: 'fast' }, 'http', 'target'],
    ['contains on a number source', { source: 'status_code', operator: 'contains', target: 2 }, 'http', 'operator'],
    ['in without a list', { source: 'status_code', operator: 'in', target: 200 }, 'http', 'target'],
    ['an invalid pattern', { source: 'body', operator: 'matches', target: '(unclosed' }, 'http', 'target'],
    ['a backreference (not RE2)', { source: 'body', operator: 'matches', target: '(a)\\1' }, 'http', 'target'],
    ['a pattern too long', { source: 'body', operator: 'matches', target: 'a'.repeat(600) }, 'http', 'target'],
    ['a source the type has not', { source: 'json', path: '$.a', operator: 'exists' }, 'dns', 'source'],
    ['packet loss on an icmp monitor', { source: 'packet_loss', operator: 'less_than', target: 10 }, 'icmp', undefined],
    ['dns answer on a dns monitor', { source: 'dns_answer', operator: 'contains', target: '192.0.2.1' }, 'dns', undefined],
  ];
  for (const [name, a, type, field] of table) {
    it(name, () => {
      assert.equal(assertionProblem(Assertion.parse(a), type)?.field, field);
    });
  }
});
