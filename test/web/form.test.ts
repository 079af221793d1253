import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { z } from 'zod';
import { loadSession } from '../../control-plane/src/accounts/sessions.ts';
import { AppError } from '../../control-plane/src/platform/errors.ts';
import type { App } from '../../control-plane/src/platform/http/context.ts';
import type { WebContext, WebDeps } from '../../control-plane/src/web/context.ts';
import { installWebErrorHandler } from '../../control-plane/src/web/errors.ts';
import { submitForm, type FormPost } from '../../control-plane/src/web/form.ts';
import { createTestDatabase, type TestDatabase } from '../harness/db.ts';
import { createAccount } from '../harness/factories.ts';
import { openSession, type TestSession } from '../harness/sessions.ts';

const Body = z.object({ name: z.string().min(1), size: z.number().int() });
type Post = FormPost<typeof Body, { id: string }>;

/** A post whose show answers with the errors as JSON, so a test reads what the form would show. */
function post(overrides: Partial<Post> = {}): Post {
  return {
    schema: Body,
    input: (form) => ({ name: form.name, size: /^\d+$/.test(String(form.size)) ? Number(form.size) : form.size }),
    show: (form, errors, status) => current.reply!.code(status).send({ shown: { name: form.name }, errors }),
    save: async () => ({ id: 'saved-1' }),
    done: (saved) => ({ flash: `Saved ${saved.id}.`, to: `/app/things/${saved.id}` }),
    ...overrides,
  };
}

// The reply of the request being handled, for `show` above.
const current: { reply?: FastifyReply } = {};

describe('dashboard form posts', () => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let session: TestSession;
  let handle: Post = post();
  let saves = 0;

  before(async () => {
    db = await createTestDatabase();
    const account = await createAccount(db.sql);
    session = await openSession(db.sql, account.user_id);
    const deps: WebDeps = {
      ctx: { sql: db.sql, now: () => new Date() } as unknown as WebContext,
      assets: { css: '/a.css', js: '/a.js', icon: '/a.svg' },
      cookies: { session: 'uptime_session', preSession: 'uptime_csrf', secure: false },
    };
    app = Fastify();
    await app.register(cookie);
    await app.register(formbody);
    installWebErrorHandler(app as unknown as App, deps);
    app.addHook('preHandler', async (req) => {
      const loaded = await loadSession(db.sql, session.token, { now: new Date(), ttlHours: 1 });
      req.webSession = loaded!.session;
    });
    app.post('/form', async (req, reply) => {
      current.reply = reply;
      return submitForm(req, reply, deps, {
        ...handle,
        save: async (data) => {
          saves++;
          return handle.save(data);
        },
      });
    });
  });
  after(async () => {
    await app.close();
    await db.drop();
  });

  const send = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
    app.inject({
      method: 'POST',
      url: '/form',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: new URLSearchParams(fields).toString(),
    });

  it('shows the form again with the API messages under their fields, and saves nothing', async () => {
    handle = post();
    saves = 0;
    const res = await send({ name: '', size: 'big' });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(res.json().errors, { name: ['The name field is required.'], size: ['The size field must be an integer.'] });
    assert.equal(saves, 0);
  });

  it('shows what the page found itself with what the schema found', async () => {
    handle = post({ check: (form): Record<string, string[]> => (form.size === '7' ? { size: ['Not seven.'] } : {}) });
    const invalid = await send({ name: '', size: '7' });
    assert.equal(invalid.statusCode, 422);
    assert.deepEqual(invalid.json().errors, { name: ['The name field is required.'], size: ['Not seven.'] });
    saves = 0;
    const onlyOwn = await send({ name: 'x', size: '7' });
    assert.deepEqual(onlyOwn.json().errors, { size: ['Not seven.'] });
    assert.equal(saves, 0);
  });

  it("shows a service's field errors on the form", async () => {
    handle = post({
      save: async () => {
        throw new AppError('VALIDATION', 'The name is taken.', { name: ['The name is taken.'] });
      },
    });
    const res = await send({ name: 'x', size: '1' });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(res.json(), { shown: { name: 'x' }, errors: { name: ['The name is taken.'] } });
  });

  it('shows the service errors a page names under a field, in its words, with their status and headers', async () => {
    const refusal = (code: 'CONFLICT' | 'RATE_LIMITED') => async () => {
      throw new AppError(code, 'for API clients', undefined, code === 'RATE_LIMITED' ? { 'retry-after': '60' } : undefined);
    };
    handle = post({ save: refusal('CONFLICT'), shown: { CONFLICT: ['name', 'Pick another name.'] } });
    const conflict = await send({ name: 'x', size: '1' });
    assert.equal(conflict.statusCode, 409);
    assert.deepEqual(conflict.json().errors, { name: ['Pick another name.'] });

    handle = post({ save: refusal('RATE_LIMITED'), shown: { RATE_LIMITED: 'size' } });
    const limited = await send({ name: 'x', size: '1' });
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.headers['retry-after'], '60');
    assert.deepEqual(limited.json().errors, { size: ['for API clients'] });
  });

  it('lets any other error through to the error page', async () => {
    handle = post({
      save: async () => {
        throw new AppError('FORBIDDEN');
      },
      shown: { CONFLICT: 'name' },
    });
    const res = await send({ name: 'x', size: '1' });
    assert.equal(res.statusCode, 403);
    assert.match(res.headers['content-type'] as string, /^text\/html/);
  });

  it('leaves a notice in the session and redirects after a save', async () => {
    handle = post();
    const res = await send({ name: 'x', size: '1' });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/app/things/saved-1');
    const loaded = await loadSession(db.sql, session.token, { now: new Date(), ttlHours: 1 });
    assert.equal(loaded!.session.flash, 'Saved saved-1.');
  });

  it('answers as the page says when it has an answer of its own', async () => {
    handle = post({ done: (saved, data) => current.reply!.code(201).send({ saved, data }) });
    const res = await send({ name: 'x', size: '3' });
    assert.equal(res.statusCode, 201);
    assert.deepEqual(res.json(), { saved: { id: 'saved-1' }, data: { name: 'x', size: 3 } });
  });

  it('refuses a signed-out form without the token of its cookie, and takes one with it', async () => {
    handle = post({ signedOut: true, done: () => current.reply!.code(200).send({ ok: true }) });
    saves = 0;
    const refused = await send({ name: 'x', size: '1', _csrf: 'a'.repeat(43) });
    assert.equal(refused.statusCode, 403);
    assert.match(refused.body, /This form has expired/);
    assert.equal(saves, 0);
    const token = 'b'.repeat(43);
    const taken = await send({ name: 'x', size: '1', _csrf: token }, { cookie: `uptime_csrf=${token}` });
    assert.equal(taken.statusCode, 200);
    assert.equal(saves, 1);
  });
});
