import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { renderStreamsDoc } from '../../shared/src/contracts/streams-doc.ts';

describe('docs/streams.md', () => {
  it('matches the message schemas (run `npm run docs:streams` after changing a contract)', () => {
    const onDisk = readFileSync(new URL('../../docs/streams.md', import.meta.url), 'utf8');
    assert.equal(onDisk, renderStreamsDoc());
  });
});
