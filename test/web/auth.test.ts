import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp, type App } from '../../control-plane/src/runtime/app.ts';
import { quietLog } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { csrfOf, webClient } from './client.ts';

describe('dashboard sign-in and sessions', () => {
  let cp: TestControlPlane;
  let account: TestAccount;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    account = await createAccount(cp.db.sql);
  });
  after(() => cp.stop());

  it('redirects a visitor without a session to the sign-in page', async () => {
    const res = await webClient(cp.url).get('/app/monitors');
    assert.equal(res.status, 303);
    assert.equal(res.location, '/app/sign-in?next=%2Fapp%2Fmonitors');
  });

  it('signs in with email and password into an HTTP-only, SameSite=Lax session cookie', async () => {
    const web = webClient(cp.url);
    const res = await web.signIn(account.email, account.password);
    assert.equal(res.status, 303);
    assert.equal(res.location, '/');
    const cookie = res.setCookies.find((c) => c.startsWith('uptime_session='));
    assert.ok(cookie, res.setCookies.join('\n'));
    assert.match(cookie, /; HttpOnly/i);
    assert.match(cookie, /; SameSite=Lax/i);
    assert.match(cookie, /; Path=\//i);
    assert.doesNotMatch(cookie, /; Secure/i, 'not Secure while PUBLIC_URL is http');
    const home = await web.get('/');
    assert.equal(home.status, 200);
    assert.equal(home.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.match(home.text, new RegExp(account.email.replace('.', '\\.')));
  });

  it('stores only a hash of the session token', async () => {
    const web = webClient(cp.url);
    await web.signIn(account.email, account.password);
    const token = web.jar.get('uptime_session')!;
    const rows = await cp.db.sql`select 1 from web_sessions where token_hash::text like ${'%' + Buffer.from(token).toString('hex') + '%'}`;
    assert.equal(rows.length, 0);
    const [row] = await cp.db.sql<{ n: number }[]>`select count(*)::int as n from web_sessions where token_hash = sha256(${token}::bytea)`;
    assert.equal(row!.n, 1);
  });

  it('returns to the page asked for after signing in, but never to another site', async () => {
    const web = webClient(cp.url);
    const page = await web.get('/app/sign-in?next=/app/heartbeats');
    const ok = await web.post('/app/sign-in', {
      _csrf: csrfOf(page.text),
      email: account.email,
      password: account.password,
      next: '/app/heartbeats',
    });
    assert.equal(ok.location, '/app/heartbeats');
    const other = webClient(cp.url);
    const page2 = await other.get('/app/sign-in');
    const evil = await other.post('/app/sign-in', {
      _csrf: csrfOf(page2.text),
      email: account.email,
      password: account.password,
      next: '//evil.example/',
    });
    assert.equal(evil.location, '/');
  });

  it('answers a wrong password and an unknown email alike', async () => {
    const a = await webClient(cp.url).signIn(account.email, 'not the password');
    const b = await webClient(cp.url).signIn('nobody@example.test', 'not the password');
    assert.equal(a.status, 401);
    assert.equal(b.status, 401);
    assert.match(a.text, /Wrong email or password/);
    assert.match(b.text, /Wrong email or password/);
  });

  it('refuses a sign-in form without its CSRF token, or from another site', async () => {
    const web = webClient(cp.url);
    await web.get('/app/sign-in');
    const missing = await web.post('/app/sign-in', { email: account.email, password: account.password });
    assert.equal(missing.status, 403);
    const wrong = await web.post('/app/sign-in', { _csrf: 'x'.repeat(43), email: account.email, password: account.password });
    assert.equal(wrong.status, 403);
    const page = await web.get('/app/sign-in');
    const cross = await web.post(
      '/app/sign-in',
      { _csrf: csrfOf(page.text), email: account.email, password: account.password },
      { origin: 'https://evil.example' },
    );
    assert.equal(cross.status, 403);
    assert.equal(web.jar.has('uptime_session'), false);
  });

  it('refuses a signed-in form without the session CSRF token, and does nothing', async () => {
    const web = webClient(cp.url);
    await web.signIn(account.email, account.password);
    const missing = await web.post('/app/settings/tokens', { name: 'csrf-less' });
    assert.equal(missing.status, 403);
    const foreign = webClient(cp.url);
    await foreign.signIn(account.email, account.password);
    const otherSessions = await foreign.get('/app/settings/tokens');
    const wrong = await web.post('/app/settings/tokens', { name: 'csrf-of-another-session', _csrf: csrfOf(otherSessions.text) });
    assert.equal(wrong.status, 403, 'a token is bound to its own session');
    const page = await web.get('/app/settings/tokens');
    const cross = await web.post(
      '/app/settings/tokens',
      { name: 'cross-site', _csrf: csrfOf(page.text) },
      { 'sec-fetch-site': 'cross-site' },
    );
    assert.equal(cross.status, 403);
    const rows = await cp.db.sql`select name from api_tokens where name in ('csrf-less', 'csrf-of-another-session', 'cross-site')`;
    assert.equal(rows.length, 0);
  });

  it('signs out: the old cookie no longer opens anything', async () => {
    const web = webClient(cp.url);
    await web.signIn(account.email, account.password);
    const token = web.jar.get('uptime_session')!;
    const home = await web.get('/');
    const out = await web.post('/app/sign-out', { _csrf: csrfOf(home.text) });
    assert.equal(out.status, 303);
    assert.equal(out.location, '/app/sign-in?signed_out=1');
    assert.equal(web.jar.has('uptime_session'), false, 'the cookie is cleared');
    const replay = await fetch(`${cp.url}/`, { redirect: 'manual', headers: { cookie: `uptime_session=${token}` } });
    assert.equal(replay.status, 303);
    assert.match(replay.headers.get('location')!, /^\/app\/sign-in/);
  });

  it('ends a session that has outlived its lifetime', async () => {
    const web = webClient(cp.url);
    await web.signIn(account.email, account.password);
    assert.equal((await web.get('/')).status, 200);
    const token = web.jar.get('uptime_session')!;
    await cp.db.sql`update web_sessions set expires_at = now() - interval '1 second' where token_hash = sha256(${token}::bytea)`;
    const res = await web.get('/app/monitors');
    assert.equal(res.status, 303);
    assert.equal(res.location, '/app/sign-in?next=%2Fapp%2Fmonitors&expired=1');
    const fragment = await web.get('/app/monitors?fragment=1');
    assert.equal(fragment.status, 401, 'a live region learns it is signed out');
  });

  it('extends a session while it is used', async () => {
    const web = webClient(cp.url);
    await web.signIn(account.email, account.password);
    const token = web.jar.get('uptime_session')!;
    await cp.db
      .sql`update web_sessions set last_seen_at = now() - interval '2 hours', expires_at = now() + interval '1 hour' where token_hash = sha256(${token}::bytea)`;
    const res = await web.get('/');
    assert.equal(res.status, 200);
    assert.ok(
      res.setCookies.some((c) => c.startsWith('uptime_session=')),
      'the cookie follows the new expiry',
    );
    const [row] = await cp.db.sql<{ hours: number }[]>`
      select extract(epoch from (expires_at - now())) / 3600 as hours from web_sessions where token_hash = sha256(${token}::bytea)`;
    assert.ok(Number(row!.hours) > 300, `expires in ${row!.hours} h`);
  });
});

describe('sign-in throttling', () => {
  let cp: TestControlPlane;
  let second: App;
  let secondUrl: string;
  /** The second process's clock: tests move it on instead of waiting. */
  let clock = Date.now();

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    // A second process over the same database: the limits are shared.
    second = await buildApp({
      config: cp.config,
      sql: cp.db.sql,
      nc: cp.nats.nc,
      log: quietLog,
      keys: cp.cp.keys,
      now: () => new Date(clock),
    });
    await second.listen({ port: 0, host: '127.0.0.1' });
    secondUrl = `http://127.0.0.1:${(second.server.address() as { port: number }).port}`;
  });
  after(async () => {
    await second.close();
    await cp.stop();
  });

  /** A client whose connections come from this loopback address. */
  const from = (address: string, url = secondUrl) => webClient(url, { localAddress: address });

  it('lets the user in from their own address while an attacker on another address is throttled, on any process', async () => {
    const account = await createAccount(cp.db.sql);
    for (let i = 0; i < 5; i++)
      assert.equal((await from('127.0.0.2', i % 2 ? secondUrl : cp.url).signIn(account.email, `wrong ${i}`)).status, 401);
    assert.equal((await from('127.0.0.3').signIn(account.email, account.password)).status, 303, 'the user, on their own address, gets in');
    assert.equal((await from('127.0.0.3', cp.url).signIn(account.email, account.password)).status, 303);

    clock = Date.now();
    const attacker = await from('127.0.0.2').signIn(account.email.toUpperCase(), account.password);
    assert.equal(
      attacker.status,
      429,
      "the attacker's address is held back, even with the right password (emails compare case-insensitively)",
    );
    assert.match(attacker.text, /Too many sign-in attempts/);
    const retryAfter = Number(attacker.headers.get('retry-after'));
    assert.ok(retryAfter > 0 && retryAfter <= 60, `Retry-After ${retryAfter}: a minute after the fifth failure`);
    assert.equal((await from('127.0.0.2', cp.url).signIn(account.email, account.password)).status, 429);
  });

  it('holds one address back from one account with a delay growing per failure, and forgets it an hour after the last', async () => {
    clock = Date.now();
    const account = await createAccount(cp.db.sql);
    const attacker = from('127.0.0.4');
    for (let i = 0; i < 5; i++) assert.equal((await attacker.signIn(account.email, `wrong ${i}`)).status, 401);
    for (const seconds of [60, 120, 240, 480, 900, 900]) {
      const held = await attacker.signIn(account.email, 'another guess');
      assert.equal(held.status, 429);
      assert.equal(held.headers.get('retry-after'), String(seconds));
      clock += seconds * 1000;
      assert.equal((await attacker.signIn(account.email, 'another guess')).status, 401, `a guess ${seconds} s later is checked`);
    }
    clock += 60 * 60 * 1000;
    assert.equal((await attacker.signIn(account.email, account.password)).status, 303, 'an hour without a failure forgets them');
  });

  it('gives an address its failures on an account back once the password is right from it', async () => {
    clock = Date.now();
    const account = await createAccount(cp.db.sql);
    // A fresh client each round: a signed-in one is sent past the sign-in page.
    for (let round = 0; round < 2; round++) {
      const user = from('127.0.0.5');
      for (let i = 0; i < 4; i++) assert.equal((await user.signIn(account.email, `typo ${i}`)).status, 401);
      assert.equal(
        (await user.signIn(account.email, account.password)).status,
        303,
        `round ${round}: 8 failures in all, only 4 since the last success`,
      );
    }
  });

  it('slows addresses new to an account once it has had 20 failures, and still lets it in from an address it signed in from', async () => {
    clock = Date.now();
    const account = await createAccount(cp.db.sql);
    assert.equal((await from('127.0.0.6').signIn(account.email, account.password)).status, 303);
    // Guesses spread over addresses, five from each so none is held back on its own: three
    // addresses' worth already counted (each real attempt costs a full scrypt), a fourth's made.
    await cp.db.sql`
      insert into sign_in_failures (key, failures, last_failure_at) values (${`account:${account.email.toLowerCase()}`}, 15, ${new Date(clock)})
      on conflict (key) do update set failures = excluded.failures, last_failure_at = excluded.last_failure_at`;
    const attacker = from('127.0.0.7');
    for (let i = 0; i < 5; i++) assert.equal((await attacker.signIn(account.email, `guess ${i}`)).status, 401);
    const fresh = await from('127.0.0.8').signIn(account.email, account.password);
    assert.equal(fresh.status, 429, 'an address the account never signed in from waits');
    assert.equal(fresh.headers.get('retry-after'), '60');
    assert.equal(
      (await from('127.0.0.6').signIn(account.email, account.password)).status,
      303,
      'the address the user signed in from before gets in',
    );
  });

  it('holds back an address that failed 30 times across accounts, whatever the email, and no other address', async () => {
    clock = Date.now();
    // 29 failures already counted (each real attempt costs a full scrypt; the count is what matters).
    await cp.db.sql`insert into sign_in_failures (key, failures, last_failure_at) values ('address:127.0.0.9', 29, ${new Date(clock)})`;
    const guesser = from('127.0.0.9');
    assert.equal((await guesser.signIn('guess@example.test', 'password')).status, 401);
    const account = await createAccount(cp.db.sql);
    const held = await guesser.signIn(account.email, account.password);
    assert.equal(held.status, 429);
    assert.equal(held.headers.get('retry-after'), '60');
    assert.equal((await from('127.0.0.10').signIn(account.email, account.password)).status, 303);
  });
});

describe('the client address behind a proxy', () => {
  let trusting: TestControlPlane;
  let direct: TestControlPlane;
  before(async () => {
    [trusting, direct] = await Promise.all([
      startTestControlPlane({ roles: ['api'], env: { TRUST_PROXY: '127.0.0.1' } }),
      startTestControlPlane({ roles: ['api'] }),
    ]);
  });
  after(() => Promise.all([trusting.stop(), direct.stop()]));

  it('throttles the address X-Forwarded-For names when the proxy is trusted (TRUST_PROXY)', async () => {
    const account = await createAccount(trusting.db.sql);
    const attacker = webClient(trusting.url, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    for (let i = 0; i < 5; i++) assert.equal((await attacker.signIn(account.email, `wrong ${i}`)).status, 401);
    assert.equal((await attacker.signIn(account.email, account.password)).status, 429);
    const user = webClient(trusting.url, { headers: { 'x-forwarded-for': '198.51.100.4' } });
    assert.equal((await user.signIn(account.email, account.password)).status, 303);
  });

  it('ignores X-Forwarded-For by default, so a client cannot pick a new address for each guess', async () => {
    const account = await createAccount(direct.db.sql);
    for (let i = 0; i < 5; i++) {
      const res = await webClient(direct.url, { headers: { 'x-forwarded-for': `203.0.113.${i + 1}` } }).signIn(account.email, `wrong ${i}`);
      assert.equal(res.status, 401);
    }
    const sixth = await webClient(direct.url, { headers: { 'x-forwarded-for': '203.0.113.99' } }).signIn(account.email, account.password);
    assert.equal(sixth.status, 429);
  });
});

describe('cookies behind https', () => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'], env: { PUBLIC_URL: 'https://status.example.com' } });
  });
  after(() => cp.stop());

  it('marks the session cookie Secure with the __Host- prefix when PUBLIC_URL is https', async () => {
    const account = await createAccount(cp.db.sql);
    const res = await webClient(cp.url).signIn(account.email, account.password);
    assert.equal(res.status, 303);
    const cookie = res.setCookies.find((c) => c.startsWith('__Host-uptime_session='));
    assert.ok(cookie, res.setCookies.join('\n'));
    assert.match(cookie, /; Secure/i);
    assert.match(cookie, /; HttpOnly/i);
    assert.match(cookie, /; SameSite=Lax/i);
  });
});

describe('sign-up', () => {
  let closed: TestControlPlane;
  let open: TestControlPlane;
  before(async () => {
    [closed, open] = await Promise.all([
      startTestControlPlane({ roles: ['api'] }),
      startTestControlPlane({ roles: ['api'], env: { ALLOW_SIGNUP: 'true' } }),
    ]);
  });
  after(() => Promise.all([closed.stop(), open.stop()]));

  it('does not exist unless ALLOW_SIGNUP is on', async () => {
    const web = webClient(closed.url);
    assert.equal((await web.get('/app/sign-up')).status, 404);
    const page = await web.get('/app/sign-in');
    assert.doesNotMatch(page.text, /Create an account/);
    const post = await web.post('/app/sign-up', { _csrf: csrfOf(page.text), email: 'new@example.test', password: 'a long password' });
    assert.equal(post.status, 404);
    assert.equal((await closed.db.sql`select 1 from users where email = 'new@example.test'`).length, 0);
  });

  it('creates a user with an organization and its Default project, and signs them in', async () => {
    const web = webClient(open.url);
    const res = await web.submit('/app/sign-up', '/app/sign-up', {
      email: 'ada@example.test',
      password: 'a long password',
      organization: 'Analytical Engines',
    });
    assert.equal(res.status, 303);
    const home = await web.get('/');
    assert.equal(home.status, 200);
    assert.match(home.text, /Analytical Engines/);
    assert.match(home.text, /Default/);
    const again = await webClient(open.url).submit('/app/sign-up', '/app/sign-up', {
      email: 'ADA@example.test',
      password: 'another long one',
    });
    assert.equal(again.status, 409);
    const short = await webClient(open.url).submit('/app/sign-up', '/app/sign-up', { email: 'bob@example.test', password: 'short' });
    assert.equal(short.status, 422);
    assert.match(short.text, /at least 10 characters/);
  });
});
