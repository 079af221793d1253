import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { toUtc } from '../../control-plane/src/platform/http/date-time.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

describe('date-times handed on in UTC', () => {
  const rows: [string, string][] = [
    ['2030-06-01T12:00:00Z', '2030-06-01T12:00:00Z'],
    ['2030-06-01T12:00:00+00:00', '2030-06-01T12:00:00Z'],
    ['2030-06-01T12:00:00.5+02:00', '2030-06-01T10:00:00.5Z'],
    ['2030-01-01T00:30:00.123456+23:59', '2029-12-31T00:31:00.123456Z'],
    ['2030-12-31T23:00:00.123456789-23:59', '2031-01-01T22:59:00.123456789Z'],
    ['2030-03-01T10:00:00+16:00', '2030-02-28T18:00:00Z'],
    ['2032-02-28T20:00:00-16:00', '2032-02-29T12:00:00Z'],
    ['not a date', 'not a date'],
  ];
  for (const [input, expected] of rows) {
    it(`${input} -> ${expected}`, () => assert.equal(toUtc(input), expected));
  }
});

/** Offsets Postgres refuses (beyond ±15:59) and the UTC instant each stands for. */
const farOffsets: [string, string][] = [
  ['2030-01-01T00:30:00.123456+23:59', '2029-12-31T00:31:00.123456Z'],
  ['2030-12-31T23:00:00.654321-23:59', '2031-01-01T22:59:00.654321Z'],
  ['2030-05-05T05:05:05+16:00', '2030-05-04T13:05:05.000000Z'],
];
/** Instants outside 1970..9999, however written; the last two are inside only before their offset. */
const outOfRange = [
  '0000-01-01T00:00:00Z',
  '0000-06-01T00:00:00+23:59',
  '-000001-01-01T00:00:00Z',
  '+275760-09-13T00:00:00Z',
  '275760-09-13T00:00:00Z',
  '9999-12-31T23:00:00-23:59',
  '1970-01-01T00:00:00+23:59',
];

describe('next_ping_at with any offset ISO 8601 allows', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let mcp: Client;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    mcp = new Client({ name: 'uptime-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${cp.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${ada.mcpToken}` } },
      }),
    );
  });
  after(async () => {
    await mcp.close();
    await cp.stop();
  });

  /** What Postgres holds, printed in UTC to the microsecond. */
  const stored = async (id: string) =>
    (
      await cp.db.sql<{ at: string | null }[]>`
      select to_char(next_ping_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at from heartbeats where id = ${id}`
    )[0]!.at;
  const create = (next_ping_at: unknown) => api('POST', '/heartbeats', { name: 'offset', project_id: ada.project_id, next_ping_at });
  const callTool = async (args: Record<string, unknown>) => {
    const res = await mcp.callTool({ name: 'create_heartbeat', arguments: { name: 'offset', project_id: ada.project_id, ...args } });
    return { isError: res.isError === true, text: (res.content as { text: string }[])[0]!.text };
  };

  for (const [input, utc] of farOffsets) {
    it(`stores ${input} as ${utc} on create`, async () => {
      const res = await create(input);
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.equal(res.body.data.next_ping_at, utc);
      assert.equal(await stored(res.body.data.id), utc);
    });

    it(`stores ${input} as ${utc} on update`, async () => {
      const id = (await create(null)).body.data.id;
      const res = await api('PATCH', `/heartbeats/${id}`, { next_ping_at: input });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.data.next_ping_at, utc);
      assert.equal(await stored(id), utc);
    });

    it(`stores ${input} as ${utc} through the MCP tool`, async () => {
      const res = await callTool({ next_ping_at: input });
      assert.equal(res.isError, false, res.text);
      const hb = JSON.parse(res.text);
      assert.equal(hb.next_ping_at, utc);
      assert.equal(await stored(hb.id), utc);
    });
  }

  it('refuses instants outside 1970..9999 with a 422 naming the field, on create, update and the MCP tool', async () => {
    const id = (await create(null)).body.data.id;
    for (const value of outOfRange) {
      for (const res of [await create(value), await api('PATCH', `/heartbeats/${id}`, { next_ping_at: value })]) {
        assert.equal(res.status, 422, `${value}: ${JSON.stringify(res.body)}`);
        assert.deepEqual(Object.keys(res.body.errors), ['next_ping_at'], value);
        assert.match(res.body.message, /next_ping_at/);
      }
      const tool = await callTool({ next_ping_at: value });
      assert.equal(tool.isError, true, `${value}: ${tool.text}`);
      assert.match(tool.text, /next_ping_at/, value);
    }
    assert.equal(await stored(id), null, 'the heartbeat is unchanged');
  });
});
