import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { documented, publishedSchema, renderStreamsDoc } from '../../shared/src/contracts/streams-doc.ts';

/** Every place in a JSON Schema that would reject a compatible addition, by JSON pointer. */
function closedPlaces(node: unknown, at = ''): string[] {
  if (Array.isArray(node)) return node.flatMap((n, i) => closedPlaces(n, `${at}/${i}`));
  if (!node || typeof node !== 'object') return [];
  const here: string[] = [];
  const o = node as Record<string, unknown>;
  if (o.additionalProperties === false) here.push(`${at}/additionalProperties`);
  if (o.unevaluatedProperties === false) here.push(`${at}/unevaluatedProperties`);
  if (Array.isArray(o.enum) && o.type === 'string') here.push(`${at}/enum`);
  return [...here, ...Object.entries(o).flatMap(([k, v]) => closedPlaces(v, `${at}/${k}`))];
}

describe('docs/streams.md', () => {
  it('matches the message schemas (run `npm run docs:streams` after changing a contract)', () => {
    const onDisk = readFileSync(new URL('../../docs/streams.md', import.meta.url), 'utf8');
    assert.equal(onDisk, renderStreamsDoc());
  });

  it('publishes every schema open to added fields and added values', () => {
    for (const e of documented) {
      assert.deepEqual(closedPlaces(publishedSchema(e.schema)), [], e.title);
    }
  });
});
