import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { createLogger } from '../../shared/src/logger.ts';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { lines, log: createLogger({ level: 'info', destination }) };
}

describe('logging', () => {
  it('redacts tokens, passwords and integration secrets wherever they appear', () => {
    const { lines, log } = capture();
    log.info({ req: { headers: { authorization: 'Bearer upt_secret1', cookie: 'sid=secret2' } } }, 'request');
    log.child({ component: 'api' }).info({ body: { basic_auth_password: 'secret3', token: 'secret4' }, password: 'secret5' }, 'body');
    log.info({ integration: { config: { bot_token: 'secret6' } }, config: { secret: 'secret7', routing_key: 'secret8' } }, 'integration');
    const text = lines.join('');
    for (let i = 1; i <= 8; i++) assert.doesNotMatch(text, new RegExp(`secret${i}`));
    assert.match(text, /\[redacted\]/);
  });

  it('names the component of a child logger on every line', () => {
    const { lines, log } = capture();
    log.child({ component: 'ingest' }).info('started');
    assert.equal(JSON.parse(lines[0]!).component, 'ingest');
  });
});

describe('request logs', () => {
  it('keep method, URL and client address, and no header at all', () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const log = createLogger({ level: 'info', destination });
    class FakeRequest {
      method = 'GET';
      url = '/monitors?page=2';
      ip = '192.0.2.7';
      headers = { authorization: 'Bearer upt_secret9', cookie: 'uptime_session=secret10' };
    }
    log.info({ req: new FakeRequest() }, 'incoming request');
    const line = JSON.parse(lines[0]!) as { req: Record<string, unknown> };
    assert.deepEqual(
      { method: line.req.method, url: line.req.url, remoteAddress: line.req.remoteAddress, headers: line.req.headers },
      { method: 'GET', url: '/monitors?page=2', remoteAddress: '192.0.2.7', headers: undefined },
    );
    assert.doesNotMatch(lines[0]!, /secret9|secret10/);
  });
});
