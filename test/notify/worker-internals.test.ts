import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { groupCommit } from '../../control-plane/src/notifications/group-commit.ts';
import { sealSecrets, settingsCache } from '../../control-plane/src/notifications/integrations/config.ts';

/** A write the test finishes by hand, recording the batches it was given. */
function controlledWrite() {
  const batches: string[][] = [];
  const pending: { resolve: (v: string) => void; reject: (e: Error) => void }[] = [];
  const write = (items: string[]) => {
    batches.push(items);
    return new Promise<string>((resolve, reject) => pending.push({ resolve, reject }));
  };
  return { write, batches, pending };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('recording in groups', () => {
  it('writes the first item at once and the ones that came meanwhile together', async () => {
    const w = controlledWrite();
    const add = groupCommit(w.write, 100);
    const a = add('a');
    await tick();
    assert.deepEqual(w.batches, [['a']]);
    const rest = ['b', 'c', 'd'].map(add);
    await tick();
    assert.equal(w.batches.length, 1, 'nothing more is written while a write is in flight');
    w.pending[0]!.resolve('first');
    assert.equal(await a, 'first');
    await tick();
    assert.deepEqual(w.batches, [['a'], ['b', 'c', 'd']]);
    w.pending[1]!.resolve('second');
    assert.deepEqual(await Promise.all(rest), ['second', 'second', 'second']);
  });

  it('splits what waited into batches of at most the limit', async () => {
    const w = controlledWrite();
    const add = groupCommit(w.write, 2);
    const all = ['a', 'b', 'c', 'd', 'e'].map(add);
    for (let i = 0; i < 3; i++) {
      await tick();
      w.pending[i]!.resolve(`w${i}`);
    }
    assert.deepEqual(await Promise.all(all), ['w0', 'w1', 'w1', 'w2', 'w2']);
    assert.deepEqual(w.batches, [['a'], ['b', 'c'], ['d', 'e']]);
  });

  it('fails only the items of a failed write, and writes the next ones', async () => {
    const w = controlledWrite();
    const add = groupCommit(w.write, 100);
    const a = add('a');
    await tick();
    const b = add('b');
    w.pending[0]!.reject(new Error('database away'));
    await assert.rejects(a, /database away/);
    await tick();
    w.pending[1]!.resolve('ok');
    assert.equal(await b, 'ok');
  });
});

describe('settings of an integration, remembered', () => {
  const key = Buffer.alloc(32, 7);
  const sealed = (secret: string) => sealSecrets({ url: 'https://hooks.example.test/a', secret }, key);

  it('uses the stored settings, and the new ones once they change', () => {
    const settingsOf = settingsCache(key);
    const first = sealed('a first secret, long enough');
    assert.equal(settingsOf('webhook', {}, first).config.secret, 'a first secret, long enough');
    assert.equal(settingsOf('webhook', {}, first).config.secret, 'a first secret, long enough');
    assert.equal(settingsOf('webhook', {}, sealed('a second secret, long enough')).config.secret, 'a second secret, long enough');
  });

  it('gives each send its own settings object', () => {
    const settingsOf = settingsCache(key);
    const s = sealed('a first secret, long enough');
    const one = settingsOf('webhook', {}, s).config;
    one.url = 'https://elsewhere.example.test/';
    assert.equal(settingsOf('webhook', {}, s).config.url, 'https://hooks.example.test/a');
  });

  it('does not remember settings that cannot be used', () => {
    const settingsOf = settingsCache(key);
    assert.throws(() => settingsOf('webhook', {}, 'v1.not.a.sealed'), /cannot be opened/);
    assert.throws(() => settingsOf('webhook', {}, 'v1.not.a.sealed'), /cannot be opened/);
  });
});
