import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  changedAt,
  checkTarget,
  storedEntry,
  type CheckedFields,
  type StoredEntry,
} from '../../control-plane/src/monitors/assign/changes.ts';
import { open, seal } from '../../shared/src/crypto.ts';

const key = randomBytes(32);
const opener = (sealed: string) => {
  try {
    return open(sealed, key);
  } catch {
    return undefined;
  }
};
const fields: CheckedFields = {
  url: 'https://example.com/health',
  method: 'GET',
  valid_http_codes: [200],
  basic_auth_username: 'probe',
  basic_auth_password_sealed: seal('pw', key),
  timeout: 10,
  follow_redirects: true,
};
const target = (over: Partial<CheckedFields> = {}) => checkTarget({ ...fields, ...over }, opener);

describe('checkTarget', () => {
  it('changes with each field a check requests or accepts', () => {
    const edits: Partial<CheckedFields>[] = [
      { url: 'https://example.com/other' },
      { method: 'HEAD' },
      { valid_http_codes: [200, 204] },
      { basic_auth_username: 'other' },
      { basic_auth_password_sealed: seal('other', key) },
      { basic_auth_password_sealed: null },
      { timeout: 5 },
      { follow_redirects: false },
    ];
    for (const edit of edits) assert.notEqual(target(edit), target(), JSON.stringify(Object.keys(edit)));
  });

  it('is the same for the same password sealed twice, and holds no password', () => {
    assert.equal(target({ basic_auth_password_sealed: seal('pw', key) }), target());
    assert.doesNotMatch(target(), /pw/);
  });

  it('compares a password it cannot open by its sealed text', () => {
    const foreign = seal('pw', randomBytes(32));
    assert.equal(target({ basic_auth_password_sealed: foreign }), target({ basic_auth_password_sealed: foreign }));
    assert.notEqual(target({ basic_auth_password_sealed: foreign }), target());
  });
});

describe('changedAt', () => {
  const revision = '2026-11-26 10:00:01.234567+00';
  const atRevision = '2026-11-26T10:00:01.234567Z';
  const earlier = '2026-11-20T08:00:00.000000Z';
  const stored = (over: Partial<StoredEntry> = {}): StoredEntry => ({ revision: 'r0', target: target(), changedAt: earlier, ...over });
  const rows: Array<[string, StoredEntry | undefined, string, string | undefined]> = [
    ['no entry: a new monitor, a re-activated one or a region added', undefined, target(), atRevision],
    ['an entry checking something else: the edit', stored(), target({ url: 'https://example.com/new' }), atRevision],
    ['an entry checking the same (a rename, a new interval): its own', stored(), target(), earlier],
    ['an entry checking the same, written before changed_at existed: none', stored({ changedAt: undefined }), target(), undefined],
    ['an entry that is no assignment: the write', stored({ target: undefined }), target(), atRevision],
  ];
  for (const [name, prev, next, want] of rows) it(name, () => assert.equal(changedAt(prev, next, revision), want));

  it('reads back what it wrote from the bucket', () => {
    const value = { ...fields, revision, changed_at: atRevision };
    assert.deepEqual(storedEntry(value, opener), { revision, target: target(), changedAt: atRevision });
    assert.deepEqual(storedEntry({ stale: true }, opener), { revision: '', target: undefined, changedAt: undefined });
    assert.deepEqual(storedEntry(null, opener), { revision: '', target: undefined, changedAt: undefined });
  });
});
