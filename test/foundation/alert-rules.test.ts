import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { promtool } from '../harness/promtool.ts';

const rules = fileURLToPath(new URL('../../deploy/prometheus/alerts.yml', import.meta.url));
const unitTests = fileURLToPath(new URL('../../deploy/prometheus/alerts.test.yml', import.meta.url));

/**
 * The alerting rules operators are told to load, checked and unit-tested by Prometheus's own tool
 * (alerts.test.yml: regions whose agents all vanish, deadline and ingest processes all gone, ...).
 */
describe('deploy/prometheus/alerts.yml', () => {
  it('is a valid rules file', async () => {
    const r = await promtool(['check', 'rules', rules]);
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /SUCCESS/);
  });

  it('passes its unit tests (promtool test rules)', async () => {
    const r = await promtool(['test', 'rules', unitTests]);
    assert.equal(r.code, 0, r.output);
  });

  it('tests every alert it defines', () => {
    const defined = [...readFileSync(rules, 'utf8').matchAll(/^\s+- alert: (\w+)/gm)].map((m) => m[1]);
    const tested = new Set([...readFileSync(unitTests, 'utf8').matchAll(/alertname: (\w+)/g)].map((m) => m[1]));
    assert.ok(defined.length > 0);
    assert.deepEqual(
      defined.filter((a) => !tested.has(a)),
      [],
    );
  });

  it('is the rules file docs/operations.md points to', () => {
    const ops = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
    assert.match(ops, /deploy\/prometheus\/alerts\.yml/);
  });
});
