import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import dns2, { type DnsServer, type Packet, type Resource } from 'dns2';
import type { ResolvedAddress } from '../../shared/src/net/lookup.ts';
import { checkDns, type DnsTarget } from '../../probe-agent/src/check/types/dns.ts';
import type { ProbeContext } from '../../probe-agent/src/check/types/probe.ts';

const { Packet: DnsPacket } = dns2;
const { TYPE, RCODE } = DnsPacket;

type Received = { name: string; type: string; from: string };

/** Records by name and type code, as the test server serves them (ttl 0 when not given). */
const zone: Record<string, Record<number, Array<Partial<Resource>>>> = {
  'two.test': {
    [TYPE.A]: [
      { address: '192.0.2.10', ttl: 300 },
      { address: '192.0.2.11', ttl: 60 },
    ],
  },
  'v6.test': { [TYPE.AAAA]: [{ address: '2001:db8::1', ttl: 120 }] },
  'alias.test': { [TYPE.CNAME]: [{ domain: 'target.test' }] },
  'mail.test': {
    [TYPE.MX]: [
      { priority: 10, exchange: 'mx1.mail.test' },
      { priority: 20, exchange: 'mx2.mail.test' },
    ],
  },
  'txt.test': { [TYPE.TXT]: [{ data: ['v=spf1 include:', 'spf.example.com -all'] }, { data: 'second record' }] },
  // RFC 2782 forbids compressing an SRV target and c-ares rejects one (EBADRESP); dns2 compresses
  // any suffix shared with the question, so the target shares none.
  '_sip._udp.test': { [TYPE.SRV]: [{ priority: 10, weight: 60, port: 5060, target: 'sip.example.net' }] },
  'caa.test': { [TYPE.CAA]: [{ flags: 0, tag: 'issue', value: 'letsencrypt.org' }] },
  'zone.test': {
    [TYPE.NS]: [{ ns: 'ns1.zone.test' }, { ns: 'ns2.zone.test' }],
    [TYPE.SOA]: [
      {
        primary: 'ns1.zone.test',
        admin: 'hostmaster.zone.test',
        serial: 2024010101,
        refresh: 7200,
        retry: 900,
        expiration: 1209600,
        minimum: 300,
      },
    ],
  },
  '1.2.0.192.in-addr.arpa': { [TYPE.PTR]: [{ domain: 'host.test' }] },
  'empty.test': { [TYPE.TXT]: [{ data: 'only text here' }] },
};
/** Names answered with an error code instead of records. */
const errorNames: Record<string, number> = { 'broken.test': RCODE.SERVFAIL, 'closed.test': RCODE.REFUSED };
/** Names the server never answers; the abort test aborts its check once its query arrives. */
const silentNames = new Set(['silent.test', 'abort.test']);

const received: Received[] = [];
const abortOnArrival = new AbortController();
let server: DnsServer;
let port = 0;
let closedPort = 0;

function respond(request: Packet, send: (response: Packet) => Promise<Buffer>, client: unknown): void {
  const question = request.questions[0];
  if (question === undefined) return;
  const from = (client as dgram.RemoteInfo).address;
  received.push({ name: question.name, type: DnsPacket.typeName(question.type), from });
  if (question.name === 'abort.test') abortOnArrival.abort();
  if (silentNames.has(question.name)) return;
  const rcode = errorNames[question.name];
  if (rcode !== undefined) return void send(DnsPacket.createErrorResponseFromRequest(request, rcode));
  const response = DnsPacket.createResponseFromRequest(request);
  const records = zone[question.name];
  if (records === undefined) response.header.rcode = RCODE.NXDOMAIN;
  for (const record of records?.[question.type] ?? []) {
    response.answers.push(DnsPacket.createResourceFromQuestion(question, { ttl: 0, ...record }));
  }
  void send(response);
}

function receivedFor(name: string): Received[] {
  return received.filter((r) => r.name === name);
}

function target(name: string, record_type: DnsTarget['record_type'], extra: Partial<DnsTarget> = {}): DnsTarget {
  return { resolver: '127.0.0.1', port, name, record_type, timeout_ms: 3000, ...extra };
}

const names: Record<string, ResolvedAddress[]> = { 'dns.test': [{ address: '127.0.0.1', family: 4 }] };

function ctx(extra: Partial<ProbeContext> = {}): ProbeContext {
  return {
    policy: { blockPrivateTargets: false },
    resolve: async (host) => {
      const found = names[host];
      if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND', hostname: host });
      return found;
    },
    userAgent: 'uptime-probe/test',
    maxBodyBytes: 1024 * 1024,
    ...extra,
  };
}

before(async () => {
  server = dns2.createServer({ udp: true, handle: respond });
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  port = addresses.udp?.port ?? 0;
  // A port nothing listens on: the kernel answers with "port unreachable".
  const probe = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => probe.bind(0, '127.0.0.1', resolve));
  closedPort = probe.address().port;
  await new Promise<void>((resolve) => probe.close(resolve));
});

after(async () => {
  await server.close();
});

describe('checkDns: answers', () => {
  it('A: every address in order with its TTL, and the query reached the server', async () => {
    const out = await checkDns(target('two.test', 'A'), ctx());
    assert.equal(out.ok, true, out.error?.message);
    assert.equal(out.error, null);
    assert.equal(out.status_code, null);
    assert.deepEqual(out.observed.dns_answers, ['192.0.2.10', '192.0.2.11']);
    assert.deepEqual(out.details?.dns, {
      rcode: 'NOERROR',
      answers: [
        { type: 'A', value: '192.0.2.10', ttl: 300 },
        { type: 'A', value: '192.0.2.11', ttl: 60 },
      ],
    });
    assert.deepEqual(
      receivedFor('two.test').map(({ name, type }) => ({ name, type })),
      [{ name: 'two.test', type: 'A' }],
    );
  });

  it('timings: total and ttfb measured, response_time is the total', async () => {
    const out = await checkDns(target('two.test', 'A'), ctx());
    assert.ok(out.timings.total > 0);
    assert.equal(out.timings.ttfb, out.timings.total);
    assert.equal(out.observed.response_time, out.timings.total);
    assert.deepEqual([out.timings.dns, out.timings.connect, out.timings.tls], [0, 0, 0]);
  });

  it('AAAA: the address with its TTL', async () => {
    const out = await checkDns(target('v6.test', 'AAAA'), ctx());
    assert.equal(out.ok, true, out.error?.message);
    assert.deepEqual(out.details?.dns?.answers, [{ type: 'AAAA', value: '2001:db8::1', ttl: 120 }]);
    assert.deepEqual(receivedFor('v6.test')[0]?.type, 'AAAA');
  });

  it('CNAME: the canonical name', async () => {
    const out = await checkDns(target('alias.test', 'CNAME'), ctx());
    assert.equal(out.ok, true, out.error?.message);
    assert.deepEqual(out.observed.dns_answers, ['target.test']);
    assert.deepEqual(out.details?.dns?.answers, [{ type: 'CNAME', value: 'target.test', ttl: 0 }]);
  });

  it('MX: "<priority> <exchange>" in the order returned', async () => {
    const out = await checkDns(target('mail.test', 'MX'), ctx());
    assert.equal(out.ok, true, out.error?.message);
    assert.deepEqual(out.observed.dns_answers, ['10 mx1.mail.test', '20 mx2.mail.test']);
  });

  it('TXT: the chunks of each record joined', async () => {
    const out = await checkDns(target('txt.test', 'TXT'), ctx());
    assert.equal(out.ok, true, out.error?.message);
    assert.deepEqual(out.observed.dns_answers, ['v=spf1 include:spf.example.com -all', 'second record']);
  });

  it('SRV: "<priority> <weight> <port> <name>"', async () => {
    const out = await checkDns(target('_sip._udp.test', 'SRV'), ctx());
    assert.equal(out.ok, true, out.error?.message);
    assert.deepEqual(out.observed.dns_answers, ['10 60 5060 sip.example.net']);
  });

  it('CAA: "<critical> <tag> <value>" with the value quoted', async () => {
    const out = await checkDns(target('caa.test', 'CAA'), ctx());
    assert.equal(out.ok, true, out.error?.message);
    assert.deepEqual(out.observed.dns_answers, ['0 issue "letsencrypt.org"']);
  });

  it('NS and SOA', async () => {
    const ns = await checkDns(target('zone.test', 'NS'), ctx());
    assert.deepEqual(ns.observed.dns_answers, ['ns1.zone.test', 'ns2.zone.test']);
    const soa = await checkDns(target('zone.test', 'SOA'), ctx());
    assert.deepEqual(soa.observed.dns_answers, ['ns1.zone.test hostmaster.zone.test 2024010101 7200 900 1209600 300']);
  });

  it('PTR: the name of the address', async () => {
    const out = await checkDns(target('1.2.0.192.in-addr.arpa', 'PTR'), ctx());
    assert.equal(out.ok, true, out.error?.message);
    assert.deepEqual(out.observed.dns_answers, ['host.test']);
  });

  it('queries leave from the configured local address', async () => {
    const out = await checkDns(target('v6.test', 'AAAA'), ctx({ localAddress: '127.0.0.2' }));
    assert.equal(out.ok, true, out.error?.message);
    assert.equal(receivedFor('v6.test').at(-1)?.from, '127.0.0.2');
  });
});

describe('checkDns: failures', () => {
  it('NXDOMAIN: no such domain', async () => {
    const out = await checkDns(target('missing.test', 'A'), ctx());
    assert.equal(out.ok, false);
    assert.deepEqual(out.error, { class: 'dns', message: 'No such domain: missing.test' });
    assert.deepEqual(out.details?.dns, { rcode: 'NXDOMAIN', answers: [] });
    assert.deepEqual(out.observed.dns_answers, []);
    assert.equal(receivedFor('missing.test').length, 1);
  });

  it('no records of the type: NOERROR without answers', async () => {
    const out = await checkDns(target('empty.test', 'A'), ctx());
    assert.equal(out.ok, false);
    assert.deepEqual(out.error, { class: 'dns', message: 'No A records for empty.test' });
    assert.deepEqual(out.details?.dns, { rcode: 'NOERROR', answers: [] });
  });

  it('SERVFAIL', async () => {
    const out = await checkDns(target('broken.test', 'A'), ctx());
    assert.equal(out.ok, false);
    assert.equal(out.error?.class, 'dns');
    assert.match(out.error?.message ?? '', /SERVFAIL/);
    assert.deepEqual(out.details?.dns, { rcode: 'SERVFAIL', answers: [] });
  });

  it('REFUSED', async () => {
    const out = await checkDns(target('closed.test', 'A'), ctx());
    assert.equal(out.error?.class, 'dns');
    assert.deepEqual(out.details?.dns, { rcode: 'REFUSED', answers: [] });
  });

  it('a server that never answers: timeout after timeout_ms', async () => {
    const out = await checkDns(target('silent.test', 'A', { timeout_ms: 200 }), ctx());
    assert.equal(out.ok, false);
    assert.deepEqual(out.error, { class: 'timeout', message: 'Timed out after 200 ms' });
    assert.equal(out.details, undefined);
    assert.equal(receivedFor('silent.test').length, 1);
  });

  it('nothing listening on the port: connection refused', async () => {
    const out = await checkDns(target('two.test', 'A', { port: closedPort }), ctx());
    assert.equal(out.ok, false);
    assert.equal(out.error?.class, 'refused');
  });

  it('abort while the query is out: cancelled', async () => {
    const out = await checkDns(target('abort.test', 'A', { timeout_ms: 30_000 }), ctx(), abortOnArrival.signal);
    assert.deepEqual(out.error, { class: 'other', message: 'Check cancelled' });
    assert.equal(receivedFor('abort.test').length, 1);
  });

  it('a signal already aborted: cancelled, nothing sent', async () => {
    const out = await checkDns(target('pre-aborted.test', 'A'), ctx(), AbortSignal.abort());
    assert.deepEqual(out.error, { class: 'other', message: 'Check cancelled' });
    assert.equal(receivedFor('pre-aborted.test').length, 0);
  });

  it('a resolver name that does not resolve', async () => {
    const out = await checkDns(target('two.test', 'A', { resolver: 'nowhere.test' }), ctx());
    assert.deepEqual(out.error, { class: 'dns', message: 'Could not resolve the DNS server nowhere.test' });
  });
});

describe('checkDns: address policy on the resolver', () => {
  const blocking = { blockPrivateTargets: true };

  it('a private resolver IP is refused when private targets are blocked, and nothing is sent', async () => {
    const out = await checkDns(target('policy-ip.test', 'A'), ctx({ policy: blocking }));
    assert.equal(out.ok, false);
    assert.deepEqual(out.error, { class: 'other', message: 'Resolver address 127.0.0.1 is not allowed' });
    assert.equal(receivedFor('policy-ip.test').length, 0);
  });

  it('a target checked again and again is judged by the context of each check: asked under one, refused under another', async () => {
    // The agent builds a target once and checks it all day; what it keeps must not carry a verdict over.
    const again = target('policy-again.test', 'A');
    const refused = ctx({ policy: blocking });
    for (let i = 0; i < 2; i++) {
      const out = await checkDns(again, refused);
      assert.deepEqual(out.error, { class: 'other', message: 'Resolver address 127.0.0.1 is not allowed' });
    }
    assert.equal(receivedFor('policy-again.test').length, 0);
    const allowed = await checkDns(again, ctx());
    assert.deepEqual(allowed.error, { class: 'dns', message: 'No such domain: policy-again.test' }, 'asked, and answered NXDOMAIN');
    const refusedAfter = await checkDns(again, refused);
    assert.deepEqual(refusedAfter.error, { class: 'other', message: 'Resolver address 127.0.0.1 is not allowed' });
    assert.equal(receivedFor('policy-again.test').length, 1);
  });

  it('a resolver name resolving to a private address is refused', async () => {
    const out = await checkDns(target('policy-name.test', 'A', { resolver: 'dns.test' }), ctx({ policy: blocking }));
    assert.deepEqual(out.error, { class: 'other', message: 'Resolver address 127.0.0.1 is not allowed' });
    assert.equal(receivedFor('policy-name.test').length, 0);
  });

  it('an allowed address is asked, by IP and by name', async () => {
    const allowing = ctx({ policy: { ...blocking, allowedAddresses: ['127.0.0.1'] } });
    const byIp = await checkDns(target('two.test', 'A'), allowing);
    assert.equal(byIp.ok, true, byIp.error?.message);
    const byName = await checkDns(target('mail.test', 'MX', { resolver: 'dns.test' }), allowing);
    assert.equal(byName.ok, true, byName.error?.message);
    assert.deepEqual(byName.observed.dns_answers, ['10 mx1.mail.test', '20 mx2.mail.test']);
  });
});
