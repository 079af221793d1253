import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Subscription } from '@nats-io/transport-node';
import { startAgent, type RunningAgent } from '../../probe-agent/src/agent.ts';
import { DomainEvent } from '../../shared/src/contracts/events.ts';
import { CheckResult } from '../../shared/src/contracts/monitoring.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startTarget, type Target } from '../harness/http.ts';
import { eventually } from '../harness/streams.ts';

/**
 * An outside consumer's view of RESULTS and EVENTS: it takes the JSON Schemas published in
 * docs/streams.md, validates with a strict standard validator (ajv, as consumers commonly do),
 * and must accept what the product really publishes, today and after compatible additions.
 */
function publishedSchema(title: string): object {
  const doc = readFileSync(new URL('../../docs/streams.md', import.meta.url), 'utf8');
  const section = doc.split(/^## /m).find((s) => s.startsWith(title));
  assert.ok(section, `docs/streams.md has a section "${title}"`);
  const block = /```json\n([\s\S]*?)\n```/.exec(section)?.[1];
  assert.ok(block, `section "${title}" has a JSON Schema`);
  return JSON.parse(block);
}

function validator(title: string): ValidateFunction {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats.default(ajv);
  return ajv.compile(publishedSchema(title));
}

function assertValid(validate: ValidateFunction, message: unknown, what: string): void {
  assert.ok(validate(message), `${what} should validate: ${JSON.stringify(validate.errors)}\n${JSON.stringify(message)}`);
}

interface Seen<T> {
  messages: T[];
  sub: Subscription;
}

describe('published stream schemas, as a validating consumer uses them', () => {
  let cp: TestControlPlane;
  let agent: RunningAgent;
  let ada: TestAccount;
  let api: Call;
  let target: Target;
  let results: Seen<any>;
  let events: Seen<any>;
  const validateResult = validator('RESULTS');
  const validateEvent = validator('EVENTS');

  const collect = (subject: string): Seen<any> => {
    const messages: any[] = [];
    const sub = cp.nats.nc.subscribe(subject, { callback: (_err, m) => void messages.push(m.json()) });
    return { messages, sub };
  };

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api', 'assign', 'ingest'] });
    results = collect(cp.nats.names.subjects.results);
    events = collect(cp.nats.names.subjects.events);
    await cp.nats.nc.flush();
    agent = await startAgent({
      config: cp.config,
      nc: cp.nats.nc,
      log: quietLog,
      region: 'local',
      port: 0,
      pingPort: 0,
      timeScale: 0.2,
      checkKey: cp.cp.keys.checkCredentials,
    });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    target = await startTarget({ status: 200, body: 'ok' });
  });
  after(async () => {
    results.sub.unsubscribe();
    events.sub.unsubscribe();
    await agent.stop();
    await target.close();
    await cp.stop();
  });

  it('accepts every result and event the product publishes for a monitor going down and up', async () => {
    const m = (
      await api('POST', '/monitors', { name: 'Consumed', url: `${target.url}/health`, project_id: ada.project_id, interval: 5, timeout: 2 })
    ).body.data;
    const monitor = async () => (await api('GET', `/monitors/${m.id}`)).body.data;
    await eventually(async () => (await monitor()).status === 1, 'monitor up', 20_000);
    target.respond({ status: 503, body: 'maintenance' });
    await eventually(async () => (await monitor()).status === 2, 'monitor down', 20_000);
    target.respond({ status: 200, body: 'ok' });
    await eventually(
      async () => events.messages.some((e) => e.subject.id === m.id && e.kind === 'monitor.up'),
      'monitor.up on EVENTS',
      20_000,
    );

    const mine = results.messages.filter((r) => r.monitor_id === m.id);
    assert.ok(mine.some((r) => r.ok) && mine.some((r) => !r.ok), 'both passing and failing results were published');
    for (const r of mine) assertValid(validateResult, r, 'a published result');
    const transitions = events.messages.filter((e) => e.subject.id === m.id);
    assert.deepEqual(
      transitions.map((e) => e.kind),
      ['monitor.down', 'monitor.up'],
    );
    for (const e of transitions) assertValid(validateEvent, e, 'a published event');
  });

  it('accepts messages carrying fields and event kinds added later, and our own receivers still read them', () => {
    const result = results.messages.find((r) => !r.ok);
    const event = events.messages[0];
    assert.ok(result && event, 'the previous test captured real messages');

    const laterResult = {
      ...result,
      body_excerpt: 'maintenance',
      timings: { ...result.timings, queued: 0.4 },
      error: { ...result.error, detail: 'x' },
    };
    assertValid(validateResult, laterResult, 'a result with added fields');
    assert.equal(CheckResult.parse(laterResult).monitor_id, result.monitor_id);

    // A result of a typed check with assertions, as the agent builds them (ADR 0034).
    const typed = {
      ...result,
      type: 'tcp',
      degraded: true,
      error: { class: 'assertion', message: 'Expected body contains "+PONG", got "-ERR"' },
      assertions: [
        { source: 'body', operator: 'contains', target: '+PONG', severity: 'down', passed: false, observed: '-ERR', message: 'x' },
        { source: 'response_time', operator: 'in', target: [1, 2], severity: 'degraded', passed: true, observed: 12.5 },
        { source: 'json', path: '$.a', operator: 'exists', severity: 'down', passed: false, observed: null },
      ],
      details: {
        certificate: {
          subject: 'CN=x',
          issuer: 'CN=ca',
          sans: ['x'],
          valid_from: '2026-01-01T00:00:00.000Z',
          valid_to: '2027-01-01T00:00:00.000Z',
          days_left: 35.5,
          fingerprint256: 'AB:CD',
        },
        dns: { rcode: 'NOERROR', answers: [{ type: 'A', value: '192.0.2.1', ttl: 60 }] },
        icmp: { sent: 3, received: 2, packet_loss: 33.3, rtt_min: 0.1, rtt_avg: 0.2, rtt_max: 0.3 },
        steps: [{ name: 'log in', ok: true, status_code: 200, total_ms: 12, error: null }],
      },
    };
    assertValid(validateResult, typed, 'a typed result with assertions and details');
    assert.equal(CheckResult.parse(typed).assertions?.length, 3);

    const laterEvent = { ...event, severity: 'critical', subject: { ...event.subject, tags: ['prod'] } };
    assertValid(validateEvent, laterEvent, 'an event with added fields');
    assert.equal(DomainEvent.parse(laterEvent).id, event.id);
    assertValid(validateEvent, { ...event, kind: 'monitor.paused' }, 'an event of a kind added later');
  });

  it('still rejects a message that breaks the contract, so the schemas are not vacuous', () => {
    const result = results.messages[0];
    const event = events.messages[0];
    const { monitor_id: _dropped, ...noMonitor } = result;
    assert.equal(validateResult(noMonitor), false);
    assert.equal(validateResult({ ...result, ok: 'yes' }), false);
    assert.equal(validateResult({ ...result, timings: { ...result.timings, total: -1 } }), false);
    assert.equal(validateEvent({ ...event, occurred_at: 'yesterday' }), false);
    assert.equal(validateEvent({ ...event, kind: 42 }), false);
  });
});
