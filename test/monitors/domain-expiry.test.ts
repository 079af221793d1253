import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createRdapClient, type RdapClient, type RdapErrorKind } from '../../control-plane/src/monitors/domain-expiry/rdap.ts';
import { monitorDomain, nextLookupAt, registrableDomain, settledFailure } from '../../control-plane/src/monitors/domain-expiry/rules.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;

describe('the registrable domain of a monitor host', () => {
  const rows: [string, string | null][] = [
    ['example.com', 'example.com'],
    ['api.eu.example.com', 'example.com'],
    ['WWW.Example.COM.', 'example.com'],
    ['shop.example.co.uk', 'example.co.uk'],
    ['example.co.uk', 'example.co.uk'],
    ['a.b.example.com.au', 'example.com.au'],
    ['www.example.uk', 'example.uk'],
    ['www.bücher.de', 'xn--bcher-kva.de'],
    // a second-level suffix missing from the list: the documented wrong guess, answered by nobody
    ['www.example.co.xx', 'co.xx'],
    ['co.uk', null],
    ['localhost', null],
    ['localhost.', null],
    ['127.0.0.1', null],
    ['[::1]', null],
    ['2001:db8::1', null],
    ['a..example.com', null],
  ];
  for (const [host, domain] of rows) {
    it(`${JSON.stringify(host)} → ${domain}`, () => assert.equal(registrableDomain(host), domain));
  }
});

describe("the domain looked up for a monitor's URL", () => {
  const rows: [string, string][] = [
    ['https://api.eu.shop.co.uk/health', 'shop.co.uk'],
    ['tcp://db.acme.io:5432', 'acme.io'],
    ['dns://mail.acme.io', 'acme.io'],
    ['icmp://router.acme.io', 'acme.io'],
    ['wss://live.acme.io/socket', 'acme.io'],
    ['grpcs://rpc.acme.io:443', 'acme.io'],
    ['https://127.0.0.1:8443/', ''],
    ['http://[::1]/', ''],
    ['http://localhost:3000/', ''],
    // Names no one registers: nothing to ask a registry.
    ['https://www.example.com/', ''],
    ['https://shop.example.org/', ''],
    ['https://app.staging.test/', ''],
    ['https://nas.home.arpa/', ''],
    ['https://printer.local/', ''],
    ['https://api.corp.internal/', ''],
    ['not a url', ''],
  ];
  for (const [url, domain] of rows) it(`${url} → ${JSON.stringify(domain)}`, () => assert.equal(monitorDomain(url), domain));
});

describe('which failed lookups are the registry’s answer (asked again a day later, not an hour)', () => {
  const rows: [RdapErrorKind, boolean][] = [
    ['no-service', true],
    ['not-found', true],
    ['invalid', true],
    ['timeout', false],
    ['network', false],
    ['status', false],
    ['too-large', false],
    ['malformed', false],
    ['redirects', false],
  ];
  for (const [kind, settled] of rows)
    it(`${kind}: ${settled ? 'settled' : 'retried soon'}`, () => assert.equal(settledFailure(kind), settled));
});

describe('when a domain is looked up next', () => {
  const now = new Date('2030-01-01T12:00:00Z');
  const ago = (ms: number) => new Date(now.getTime() - ms);
  const rows: [string, Date | null, boolean, Date][] = [
    ['never looked up: now', null, true, now],
    ['ok 2 hours ago: a day after it', ago(2 * HOUR), true, new Date(now.getTime() + 22 * HOUR)],
    ['failed 10 minutes ago: an hour after it', ago(10 * 60_000), false, new Date(now.getTime() + 50 * 60_000)],
    ['ok 3 days ago (service was off): now', ago(3 * DAY), true, now],
    ['failed 2 hours ago: now', ago(2 * HOUR), false, now],
  ];
  for (const [name, last, ok, expected] of rows) {
    it(name, () => assert.deepEqual(nextLookupAt(last, ok, now), expected));
  }
});

type Seen = { path: string; accept: string | undefined; userAgent: string | undefined };

describe('the RDAP client', () => {
  const seen: Seen[] = [];
  const hanging = new Set<http.ServerResponse>();
  let server: http.Server;
  let base = '';
  let client: RdapClient;
  const clients: RdapClient[] = [];

  const registrar = (fn: string | null, handle?: string) => ({
    objectClassName: 'entity',
    roles: ['registrar'],
    ...(handle ? { handle } : {}),
    ...(fn
      ? {
          vcardArray: [
            'vcard',
            [
              ['version', {}, 'text', '4.0'],
              ['fn', {}, 'text', fn],
            ],
          ],
        }
      : {}),
  });
  const expiration = (date: string) => ({ eventAction: 'expiration', eventDate: date });
  const answers: Record<string, object> = {
    '/rdap/domain/registered.test': {
      objectClassName: 'domain',
      ldhName: 'registered.test',
      events: [{ eventAction: 'registration', eventDate: '2020-05-01T00:00:00Z' }, expiration('2031-05-01T00:00:00Z')],
      entities: [
        { objectClassName: 'entity', roles: ['registrant'], vcardArray: ['vcard', [['fn', {}, 'text', 'The Owner']]] },
        registrar('Example Registrar, Inc.', '1234'),
      ],
    },
    '/rdap/domain/handle-only.test': { events: [expiration('2030-02-03T04:05:06Z')], entities: [registrar(null, '292')] },
    '/rdap/domain/no-expiry.test': { events: [{ eventAction: 'registration', eventDate: '2020-05-01T00:00:00Z' }] },
    '/rdap/domain/bad-date.test': { events: [expiration('soon')] },
    '/rdap/elsewhere/moved.test': { events: [expiration('2032-01-01T00:00:00Z')], entities: [registrar('Moved Registrar')] },
    '/sub/domain/example.sub.test': { events: [expiration('2033-01-01T00:00:00Z')], entities: [registrar('Sub Registry')] },
    '/noslash/domain/example.noslash': { events: [expiration('2034-01-01T00:00:00Z')] },
  };

  function bootstrapFile() {
    return {
      version: '1.0',
      publication: '2030-01-01T00:00:00Z',
      services: [
        [['test'], [`${base}/rdap/`]],
        [['sub.test'], [`${base}/sub/`]],
        [['noslash'], [`${base}/noslash`]],
        [['slow'], [`${base}/hang/`]],
        [['big'], [`${base}/big/`]],
      ],
    };
  }

  function sendHuge(res: http.ServerResponse, declareLength: boolean): void {
    const total = 2 * 1024 * 1024;
    res.writeHead(200, { 'content-type': 'application/rdap+json', ...(declareLength ? { 'content-length': String(total) } : {}) });
    res.on('error', () => {});
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const pump = () => {
      while (sent < total && !res.destroyed) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  }

  function handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    seen.push({ path, accept: req.headers.accept, userAgent: req.headers['user-agent'] });
    const answer = answers[path];
    if (path === '/bootstrap.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify(bootstrapFile()));
    }
    if (answer) {
      res.writeHead(200, { 'content-type': 'application/rdap+json' });
      return void res.end(JSON.stringify(answer));
    }
    if (path === '/rdap/domain/moved.test') {
      res.writeHead(302, { location: '/rdap/elsewhere/moved.test' });
      return void res.end();
    }
    if (path === '/rdap/domain/loop.test') {
      res.writeHead(301, { location: path });
      return void res.end();
    }
    if (path === '/rdap/domain/not-json.test') {
      res.writeHead(200, { 'content-type': 'application/rdap+json' });
      return void res.end('<html>maintenance</html>');
    }
    if (path.startsWith('/hang/')) return void hanging.add(res);
    if (path === '/big/domain/streamed.big') return sendHuge(res, false);
    if (path === '/big/domain/declared.big') return sendHuge(res, true);
    res.writeHead(404, { 'content-type': 'application/rdap+json' });
    res.end(JSON.stringify({ errorCode: 404, title: 'Not Found' }));
  }

  const requestsTo = (prefix: string) => seen.filter((s) => s.path.startsWith(prefix)).length;

  function newClient(opts: { timeoutMs?: number; bootstrapTtlMs?: number; bootstrapPath?: string } = {}): RdapClient {
    const c = createRdapClient({
      bootstrapUrl: `${base}${opts.bootstrapPath ?? '/bootstrap.json'}`,
      userAgent: 'uptime-test/1.0',
      timeoutMs: opts.timeoutMs ?? 10_000,
      bootstrapTtlMs: opts.bootstrapTtlMs,
    });
    clients.push(c);
    return c;
  }

  async function rejectsWith(promise: Promise<unknown>, kind: RdapErrorKind, message: string | RegExp): Promise<void> {
    await assert.rejects(promise, (err: Error & { kind?: string }) => {
      assert.equal(err.name, 'RdapError');
      assert.equal(err.kind, kind);
      if (typeof message === 'string') assert.equal(err.message, message);
      else assert.match(err.message, message);
      return true;
    });
  }

  before(async () => {
    server = http.createServer(handle);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = newClient();
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('reads the expiration date and the registrar (its name, not another role) of a domain', async () => {
    const got = await client.lookup('registered.test');
    assert.deepEqual(got, {
      expiresAt: new Date('2031-05-01T00:00:00Z'),
      registrar: 'Example Registrar, Inc.',
      rdapUrl: `${base}/rdap/domain/registered.test`,
    });
    const asked = seen.find((s) => s.path === '/rdap/domain/registered.test');
    assert.equal(asked?.accept, 'application/rdap+json');
    assert.equal(asked?.userAgent, 'uptime-test/1.0');
  });

  it('names a registrar without a vCard by its handle', async () => {
    const got = await client.lookup('Handle-Only.TEST.');
    assert.deepEqual(got.expiresAt, new Date('2030-02-03T04:05:06Z'));
    assert.equal(got.registrar, '292');
  });

  it('answers no date when the registry publishes none', async () => {
    assert.deepEqual(await client.lookup('no-expiry.test'), {
      expiresAt: null,
      registrar: null,
      rdapUrl: `${base}/rdap/domain/no-expiry.test`,
    });
  });

  it('refuses an expiration event without a readable date', () =>
    rejectsWith(client.lookup('bad-date.test'), 'malformed', 'RDAP answer has an unreadable expiration date'));

  it('refuses an answer that is not JSON', () =>
    rejectsWith(client.lookup('not-json.test'), 'malformed', /^RDAP answer from 127\.0\.0\.1:\d+ is not JSON$/));

  it('reports a domain the registry does not know', () =>
    rejectsWith(client.lookup('missing.test'), 'not-found', 'RDAP server answered 404 for missing.test'));

  it('follows a redirect and reports where the answer came from', async () => {
    const got = await client.lookup('moved.test');
    assert.deepEqual(got, {
      expiresAt: new Date('2032-01-01T00:00:00Z'),
      registrar: 'Moved Registrar',
      rdapUrl: `${base}/rdap/elsewhere/moved.test`,
    });
  });

  it('stops after three redirects', async () => {
    await rejectsWith(client.lookup('loop.test'), 'redirects', 'Too many RDAP redirects (more than 3)');
    assert.equal(requestsTo('/rdap/domain/loop.test'), 4);
  });

  it('uses the longest matching bootstrap entry', async () => {
    assert.equal((await client.lookup('example.sub.test')).registrar, 'Sub Registry');
  });

  it('adds the slash a base URL lacks', async () => {
    assert.deepEqual((await client.lookup('example.noslash')).expiresAt, new Date('2034-01-01T00:00:00Z'));
  });

  it('reports a TLD without an RDAP service, asking no server', async () => {
    const before = seen.length;
    await rejectsWith(client.lookup('example.unknown'), 'no-service', 'No RDAP service for .unknown');
    assert.equal(seen.length, before);
  });

  it('refuses a name that is not a domain, asking no server', async () => {
    const before = seen.length;
    await rejectsWith(client.lookup('../../admin'), 'invalid', 'Not a domain name: "../../admin"');
    assert.equal(seen.length, before);
  });

  it('gives up on a server that never answers', async () => {
    const impatient = newClient({ timeoutMs: 200 });
    await rejectsWith(impatient.lookup('example.slow'), 'timeout', /^RDAP request to 127\.0\.0\.1:\d+ timed out after 200 ms$/);
  });

  it('cuts off a huge answer, streamed or declared', async () => {
    const tooLarge = /^RDAP answer from 127\.0\.0\.1:\d+ is larger than 1 MB$/;
    await rejectsWith(client.lookup('streamed.big'), 'too-large', tooLarge);
    await rejectsWith(client.lookup('declared.big'), 'too-large', tooLarge);
  });

  it('fetches the bootstrap file once for two lookups, and again once it is stale', async () => {
    const fresh = newClient();
    const beforeFresh = requestsTo('/bootstrap.json');
    await Promise.all([fresh.lookup('registered.test'), fresh.lookup('no-expiry.test')]);
    await fresh.lookup('handle-only.test');
    assert.equal(requestsTo('/bootstrap.json') - beforeFresh, 1);

    const stale = newClient({ bootstrapTtlMs: 0 });
    const beforeStale = requestsTo('/bootstrap.json');
    await stale.lookup('registered.test');
    await stale.lookup('no-expiry.test');
    assert.equal(requestsTo('/bootstrap.json') - beforeStale, 2);
  });

  it('reports a bootstrap file it cannot get, and tries again on the next lookup', async () => {
    const lost = newClient({ bootstrapPath: '/no-such-bootstrap.json' });
    await rejectsWith(lost.lookup('registered.test'), 'status', 'RDAP bootstrap answered 404');
    await rejectsWith(lost.lookup('registered.test'), 'status', 'RDAP bootstrap answered 404');
    assert.equal(requestsTo('/no-such-bootstrap.json'), 2);
  });
});
