import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Readable } from 'node:stream';
import { bodyExcerpt, parsePingTarget, readBodyHead, utf8Boundary } from '../../shared/src/pings/request.ts';

const ID = '6f1c2a7e-3b0d-4c5e-9f8a-1b2c3d4e5f60';

describe('ping URLs', () => {
  const rows: { suffix: string | undefined; expect: ReturnType<typeof parsePingTarget> }[] = [
    { suffix: undefined, expect: { heartbeatId: ID, kind: 'success', exitCode: null } },
    { suffix: 'start', expect: { heartbeatId: ID, kind: 'start', exitCode: null } },
    { suffix: 'fail', expect: { heartbeatId: ID, kind: 'fail', exitCode: null } },
    { suffix: '0', expect: { heartbeatId: ID, kind: 'success', exitCode: 0 } },
    { suffix: '1', expect: { heartbeatId: ID, kind: 'fail', exitCode: 1 } },
    { suffix: '255', expect: { heartbeatId: ID, kind: 'fail', exitCode: 255 } },
    { suffix: '007', expect: { heartbeatId: ID, kind: 'fail', exitCode: 7 } },
    { suffix: '256', expect: null },
    { suffix: '-1', expect: null },
    { suffix: '1000', expect: null },
    { suffix: '1.5', expect: null },
    { suffix: 'Start', expect: null },
    { suffix: 'log', expect: null },
    { suffix: '', expect: null },
  ];
  for (const r of rows) {
    it(`reads /heartbeat/<id>${r.suffix === undefined ? '' : `/${r.suffix}`} as ${r.expect ? `${r.expect.kind}${r.expect.exitCode === null ? '' : ` (exit ${r.expect.exitCode})`}` : 'no ping URL'}`, () => {
      assert.deepEqual(parsePingTarget(ID, r.suffix), r.expect);
    });
  }

  it('accepts an upper-case id and names the heartbeat in lower case', () => {
    assert.equal(parsePingTarget(ID.toUpperCase())?.heartbeatId, ID);
  });

  it('refuses ids that are not UUIDs', () => {
    for (const id of ['abc', `${ID}x`, ID.replaceAll('-', ''), '../../etc/passwd']) assert.equal(parsePingTarget(id), null, id);
  });
});

describe('ping bodies', () => {
  const bytes = (...b: number[]) => Uint8Array.from(b);
  const boundaries: { name: string; buf: Uint8Array; end: number }[] = [
    { name: 'ASCII ends anywhere', buf: bytes(0x61, 0x62), end: 2 },
    { name: 'a complete 2-byte character is kept', buf: bytes(0x61, 0xc3, 0xa9), end: 3 },
    { name: 'half of a 2-byte character is cut', buf: bytes(0x61, 0xc3), end: 1 },
    { name: 'two thirds of a 3-byte character are cut', buf: bytes(0x61, 0xe2, 0x82), end: 1 },
    { name: 'a complete 3-byte character is kept', buf: bytes(0xe2, 0x82, 0xac), end: 3 },
    { name: 'three quarters of a 4-byte character are cut', buf: bytes(0x61, 0xf0, 0x9f, 0x98), end: 1 },
    { name: 'a complete 4-byte character is kept', buf: bytes(0xf0, 0x9f, 0x98, 0x80), end: 4 },
    { name: 'stray continuation bytes are left to the decoder', buf: bytes(0x80, 0x80, 0x80, 0x80), end: 4 },
    { name: 'an empty body', buf: bytes(), end: 0 },
  ];
  for (const b of boundaries) {
    it(`cuts at a character boundary: ${b.name}`, () => assert.equal(utf8Boundary(b.buf), b.end));
  }

  it('keeps text, and replaces NUL and bytes that are not UTF-8', () => {
    assert.equal(bodyExcerpt(Buffer.from('backup done: 12 GB\n'), false), 'backup done: 12 GB\n');
    assert.equal(bodyExcerpt(bytes(0x61, 0x00, 0x62), false), 'a\uFFFDb');
    assert.equal(bodyExcerpt(bytes(0x61, 0xff, 0x62), false), 'a\uFFFDb');
  });

  it('drops a character split by the cut instead of showing a replacement', () => {
    assert.equal(bodyExcerpt(Buffer.from('prix: 5€').subarray(0, 9), true), 'prix: 5');
    assert.equal(bodyExcerpt(Buffer.from('prix: 5€').subarray(0, 9), false), 'prix: 5\uFFFD');
  });

  it('keeps the first bytes of a long body and counts all of it', async () => {
    const chunks = [Buffer.alloc(6000, 'a'), Buffer.alloc(6000, 'b'), Buffer.alloc(100, 'c')];
    const { head, size } = await readBodyHead(Readable.from(chunks), 10 * 1024);
    assert.equal(size, 12_100);
    assert.equal(head.length, 10 * 1024);
    assert.equal(head.toString('latin1'), 'a'.repeat(6000) + 'b'.repeat(10 * 1024 - 6000));
  });

  it('reads an empty body as empty', async () => {
    assert.deepEqual(await readBodyHead(Readable.from([]), 10), { head: Buffer.alloc(0), size: 0 });
  });
});
