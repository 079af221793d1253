import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { desiredEntries, regionTypes, type AssignableMonitor, type LiveAgent } from '../../control-plane/src/monitors/assign/desired.ts';
import { natsNames } from '../../shared/src/subjects.ts';

const agent = (region: string, checkTypes: string[] | null): LiveAgent => ({ region, checkTypes });
const types = (agents: LiveAgent[]) => Object.fromEntries([...regionTypes(agents)].map(([r, t]) => [r, [...t].sort()]));

describe('regionTypes', () => {
  const rows: [string, LiveAgent[], Record<string, string[]>][] = [
    ['no agents: no regions', [], {}],
    ['an agent from before types runs http only', [agent('eu', null)], { eu: ['http'] }],
    ['one agent: its types', [agent('eu', ['http', 'tcp', 'dns'])], { eu: ['dns', 'http', 'tcp'] }],
    [
      'several agents: the types all of them run',
      [agent('eu', ['http', 'tcp', 'dns']), agent('eu', ['http', 'tcp'])],
      { eu: ['http', 'tcp'] },
    ],
    ['an old agent in the region holds it to http', [agent('eu', ['http', 'tcp']), agent('eu', null)], { eu: ['http'] }],
    ['regions apart', [agent('eu', ['http', 'tcp']), agent('us', null)], { eu: ['http', 'tcp'], us: ['http'] }],
  ];
  for (const [name, agents, expected] of rows) it(name, () => assert.deepEqual(types(agents), expected));
});

describe('desiredEntries by the types a region runs', () => {
  const names = natsNames('t');
  const monitor = (type: AssignableMonitor['type'], regions: string[] | null = null): AssignableMonitor =>
    ({
      id: '00000000-0000-4000-8000-000000000001',
      project_id: '00000000-0000-4000-8000-000000000002',
      url: type === 'http' ? 'https://a.example' : 'tcp://a.example:5432',
      method: 'GET',
      valid_http_codes: [200],
      basic_auth_username: null,
      basic_auth_password_sealed: null,
      interval_seconds: 60,
      timeout_seconds: 10,
      follow_redirects: true,
      type,
      settings_sealed: null,
      assertions: [],
      active: true,
      regions,
      updated_at: '2026-11-27T00:00:00.000Z',
    }) as AssignableMonitor;
  const live = regionTypes([agent('eu', ['http', 'tcp']), agent('us', null)]);
  const regionsOf = (m: AssignableMonitor) => [...desiredEntries(m, live, names, (p) => p).values()].map((a) => a.region).sort();

  it('puts an http monitor in every live region', () => assert.deepEqual(regionsOf(monitor('http')), ['eu', 'us']));
  it('leaves a TCP monitor out of a region whose agents do not all run TCP', () => assert.deepEqual(regionsOf(monitor('tcp')), ['eu']));
  it('keeps a named region that has no live agent (its types are not known)', () =>
    assert.deepEqual(regionsOf(monitor('tcp', ['eu', 'us', 'ap'])), ['ap', 'eu']));
});
