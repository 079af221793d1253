import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Resolve } from '../../shared/src/net/lookup.ts';
import { checkIcmp, parsePingOutput, type IcmpTarget } from '../../probe-agent/src/check/types/icmp.ts';
import type { ProbeContext } from '../../probe-agent/src/check/types/probe.ts';

const ALL_REPLIES = `PING 127.0.0.1 (127.0.0.1) 56(84) bytes of data.
64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.036 ms
64 bytes from 127.0.0.1: icmp_seq=2 ttl=64 time=0.055 ms
64 bytes from 127.0.0.1: icmp_seq=3 ttl=64 time=0.035 ms

--- 127.0.0.1 ping statistics ---
3 packets transmitted, 3 received, 0% packet loss, time 415ms
rtt min/avg/max/mdev = 0.035/0.042/0.055/0.009 ms
`;

const PARTIAL_LOSS = `PING 10.0.0.1 (10.0.0.1) 56(84) bytes of data.
64 bytes from 10.0.0.1: icmp_seq=1 ttl=63 time=12.4 ms
64 bytes from 10.0.0.1: icmp_seq=4 ttl=63 time=15.1 ms

--- 10.0.0.1 ping statistics ---
4 packets transmitted, 2 received, 50% packet loss, time 612ms
rtt min/avg/max/mdev = 12.400/13.750/15.100/1.350 ms
`;

const NO_REPLY = `PING 198.51.100.1 (198.51.100.1) 56(84) bytes of data.
From 21.4.5.131 icmp_seq=1 Destination Net Unreachable

--- 198.51.100.1 ping statistics ---
1 packets transmitted, 0 received, +1 errors, 100% packet loss, time 0ms

`;

const DUPLICATES = `PING 192.168.1.255 (192.168.1.255) 56(84) bytes of data.
64 bytes from 192.168.1.10: icmp_seq=1 ttl=64 time=0.512 ms
64 bytes from 192.168.1.11: icmp_seq=1 ttl=64 time=0.900 ms (DUP!)
64 bytes from 192.168.1.10: icmp_seq=2 ttl=64 time=0.610 ms
64 bytes from 192.168.1.11: icmp_seq=2 ttl=64 time=1.200 ms (DUP!)

--- 192.168.1.255 ping statistics ---
2 packets transmitted, 2 received, +2 duplicates, 0% packet loss, time 201ms
rtt min/avg/max/mdev = 0.512/0.805/1.200/0.270 ms
`;

const IPV6 = `PING ::1(::1) 56 data bytes
64 bytes from ::1: icmp_seq=1 ttl=64 time=0.100 ms
64 bytes from ::1: icmp_seq=2 ttl=64 time=0.054 ms

--- ::1 ping statistics ---
2 packets transmitted, 2 received, 0% packet loss, time 209ms
`;

const KILLED = `PING 127.0.0.1 (127.0.0.1) 56(84) bytes of data.
64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.036 ms
`;

describe('parsePingOutput', () => {
  const cases: Array<[string, string, ReturnType<typeof parsePingOutput>]> = [
    ['all replies', ALL_REPLIES, { sent: 3, received: 3, rtts: [0.036, 0.055, 0.035] }],
    ['partial loss', PARTIAL_LOSS, { sent: 4, received: 2, rtts: [12.4, 15.1] }],
    ['no reply, an ICMP error instead', NO_REPLY, { sent: 1, received: 0, rtts: [] }],
    ['duplicates: the first reply of each sequence number', DUPLICATES, { sent: 2, received: 2, rtts: [0.512, 0.61] }],
    ['IPv6 replies', IPV6, { sent: 2, received: 2, rtts: [0.1, 0.054] }],
    ['output cut before the summary', KILLED, null],
    ['garbage', 'ping: unknown host\nsomething else entirely\n', null],
    ['nothing', '', null],
  ];
  for (const [name, stdout, expected] of cases) {
    it(name, () => assert.deepEqual(parsePingOutput(stdout), expected));
  }
});

let dir = '';

/** Resolves the names of `table`; any other name fails as getaddrinfo does. */
function names(table: Record<string, string>): Resolve {
  return async (hostname) => {
    const address = table[hostname];
    if (address === undefined) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
    }
    return [{ address, family: isIP(address) === 6 ? 6 : 4 }];
  };
}

function ctx(extra: Partial<ProbeContext> = {}): ProbeContext {
  return {
    policy: { blockPrivateTargets: false },
    resolve: names({ 'loopback.test': '127.0.0.1', 'odd.test': '-f' }),
    userAgent: 'uptime-probe/test',
    maxBodyBytes: 1024 * 1024,
    ...extra,
  };
}

function target(host: string, extra: Partial<IcmpTarget> = {}): IcmpTarget {
  return { host, count: 3, timeout_ms: 3000, ...extra };
}

let scripts = 0;

/** A program standing in for ping: a shell script with `body`, in its own directory. */
function program(body: string): { path: string; dir: string } {
  const own = join(dir, `program-${++scripts}`);
  mkdirSync(own);
  const path = join(own, 'ping');
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return { path, dir: own };
}

const watchers = new Set<FSWatcher>();

type RecordedPing = {
  path: string;
  /** The arguments ping got. */
  args(): string[];
  /** Whether the check ran the program at all. */
  ran(): boolean;
  /** The process id, once the program has started. */
  pid(): number;
  /** Resolves with the process id when the program starts; call before the check runs. */
  started(): Promise<number>;
};

/** The system ping, run through a script that first records its arguments and its process id. */
function recordedPing(): RecordedPing {
  const p = program(`cd "$(dirname "$0")"\nprintf '%s\\n' "$@" > args\necho $$ > pid.new\nmv pid.new pid\nexec ping "$@"`);
  const pidFile = join(p.dir, 'pid');
  const pid = () => Number(readFileSync(pidFile, 'utf8'));
  return {
    path: p.path,
    args: () => readFileSync(join(p.dir, 'args'), 'utf8').trimEnd().split('\n'),
    ran: () => existsSync(join(p.dir, 'args')),
    pid,
    started: () =>
      new Promise<number>((resolve) => {
        const watcher = watch(p.dir, () => {
          if (!existsSync(pidFile)) return;
          watcher.close();
          watchers.delete(watcher);
          resolve(pid());
        });
        watchers.add(watcher);
      }),
  };
}

function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'check-icmp-'));
});

after(() => {
  for (const w of watchers) w.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('checkIcmp', () => {
  it('pings 127.0.0.1: ok, three replies, round trips and loss', async () => {
    const out = await checkIcmp(target('127.0.0.1'), ctx());
    assert.equal(out.ok, true);
    assert.equal(out.error, null);
    const icmp = out.details?.icmp;
    assert.ok(icmp);
    assert.equal(icmp.sent, 3);
    assert.equal(icmp.received, 3);
    assert.equal(icmp.packet_loss, 0);
    assert.ok(icmp.rtt_min !== null && icmp.rtt_avg !== null && icmp.rtt_max !== null);
    assert.ok(icmp.rtt_min <= icmp.rtt_avg && icmp.rtt_avg <= icmp.rtt_max);
    assert.equal(out.observed.packet_loss, 0);
    assert.equal(out.observed.response_time, icmp.rtt_avg);
    assert.ok(out.timings.total > 0);
    assert.equal(out.timings.dns, 0);
  });

  it('pings the resolved address only, never the name, with the source address', async () => {
    const ping = recordedPing();
    const out = await checkIcmp(target('loopback.test', { count: 2 }), ctx({ localAddress: '127.0.0.1' }), undefined, ping.path);
    assert.equal(out.ok, true);
    assert.equal(out.details?.icmp?.received, 2);
    const args = ping.args();
    assert.deepEqual(args.slice(0, 6), ['-n', '-c', '2', '-i', '0.2', '-W']);
    assert.ok(Number(args[6]) > 0);
    assert.deepEqual(args.slice(7), ['-4', '-I', '127.0.0.1', '127.0.0.1']);
  });

  it('fails with class timeout when an unroutable address does not answer', async () => {
    // 192.0.2.1 (TEST-NET-1) is the default gateway of some sandboxes and answers there;
    // TEST-NET-2 is routed nowhere: dropped, or refused by an ICMP error that is no reply either.
    const out = await checkIcmp(target('198.51.100.1', { count: 1, timeout_ms: 1500 }), ctx());
    assert.equal(out.ok, false);
    assert.equal(out.error?.class, 'timeout');
    assert.match(out.error?.message ?? '', /^(No reply to 1 pings|Timed out after 1500 ms)$/);
    if (out.details?.icmp) {
      assert.deepEqual(out.details.icmp, { sent: 1, received: 0, packet_loss: 100, rtt_min: null, rtt_avg: null, rtt_max: null });
      assert.equal(out.observed.packet_loss, 100);
      assert.equal(out.observed.response_time, out.timings.total);
    }
  });

  // 100 requests take ping 20 s on its own: only a killed ping lets these two tests end in time.
  const killed = { timeout: 10_000 };

  it('stops a ping that outlasts timeout_ms and waits for it to exit', killed, async () => {
    const ping = recordedPing();
    const out = await checkIcmp(target('127.0.0.1', { count: 100, timeout_ms: 300 }), ctx(), undefined, ping.path);
    assert.deepEqual(out.error, { class: 'timeout', message: 'Timed out after 300 ms' });
    assert.equal(out.details, undefined);
    assert.ok(isGone(ping.pid()));
  });

  it('times out while the name does not resolve', async () => {
    const out = await checkIcmp(target('slow.test', { timeout_ms: 200 }), ctx({ resolve: () => new Promise(() => {}) }));
    assert.deepEqual(out.error, { class: 'timeout', message: 'Timed out after 200 ms' });
  });

  it('refuses 127.0.0.1 when private targets are blocked, as a literal or behind a name, without running ping', async () => {
    const ping = recordedPing();
    const policy = { blockPrivateTargets: true };
    const literal = await checkIcmp(target('127.0.0.1'), ctx({ policy }), undefined, ping.path);
    assert.deepEqual(literal.error, { class: 'other', message: 'Target address 127.0.0.1 is not allowed' });
    assert.equal(literal.ok, false);
    const named = await checkIcmp(target('loopback.test'), ctx({ policy }), undefined, ping.path);
    assert.deepEqual(named.error, { class: 'other', message: 'Target address 127.0.0.1 is not allowed' });
    assert.equal(ping.ran(), false);
  });

  it('allows 127.0.0.1 when it is an allowed address', async () => {
    const out = await checkIcmp(
      target('127.0.0.1', { count: 1 }),
      ctx({ policy: { blockPrivateTargets: true, allowedAddresses: ['127.0.0.1'] } }),
    );
    assert.equal(out.ok, true);
    assert.equal(out.details?.icmp?.received, 1);
  });

  it('fails with class dns for an unknown name or an answer that is not an address', async () => {
    const ping = recordedPing();
    const unknown = await checkIcmp(target('nowhere.test'), ctx(), undefined, ping.path);
    assert.deepEqual(unknown.error, { class: 'dns', message: 'DNS lookup failed for nowhere.test (ENOTFOUND)' });
    const odd = await checkIcmp(target('odd.test'), ctx(), undefined, ping.path);
    assert.deepEqual(odd.error, { class: 'dns', message: 'DNS lookup failed for odd.test (ENOTFOUND)' });
    assert.equal(ping.ran(), false);
  });

  it('kills ping when the caller cancels, and waits for it to exit', killed, async () => {
    const ping = recordedPing();
    const controller = new AbortController();
    const started = ping.started();
    const running = checkIcmp(target('127.0.0.1', { count: 100, timeout_ms: 30_000 }), ctx(), controller.signal, ping.path);
    const pid = await Promise.race([started, running.then((out) => assert.fail(`ended before it was cancelled: ${out.error?.message}`))]);
    controller.abort();
    const out = await running;
    assert.deepEqual(out.error, { class: 'other', message: 'Check cancelled' });
    assert.equal(out.ok, false);
    assert.ok(isGone(pid));
  });

  it('does not start when the signal is already aborted', async () => {
    const ping = recordedPing();
    const out = await checkIcmp(target('127.0.0.1'), ctx(), AbortSignal.abort(), ping.path);
    assert.deepEqual(out.error, { class: 'other', message: 'Check cancelled' });
    assert.equal(ping.ran(), false);
  });

  it('says the probe host needs ping when it is not installed', async () => {
    const out = await checkIcmp(target('127.0.0.1'), ctx(), undefined, join(dir, 'missing', 'ping'));
    assert.deepEqual(out.error, { class: 'other', message: 'ICMP checks need the system ping (iputils-ping) on the probe host' });
  });

  // What iputils 20221126 prints on stderr (exit status 2) when it cannot ping at all.
  const pingErrors: Array<[string, string[], string]> = [
    [
      'a user outside ping_group_range, without cap_net_raw',
      ['ping: socktype: SOCK_RAW', 'ping: socket: Operation not permitted', 'ping: => missing cap_net_raw+p capability or setuid?'],
      'ICMP sockets are not permitted for this user: allow its group in net.ipv4.ping_group_range (datagram sockets) or give ping cap_net_raw (raw sockets)',
    ],
    ['no route to the address', ['ping: connect: Network is unreachable'], 'Network unreachable'],
    [
      'a source address the host does not have',
      ['ping: bind: Cannot assign requested address'],
      'ping failed: bind: Cannot assign requested address',
    ],
  ];
  for (const [name, stderr, message] of pingErrors) {
    it(`explains a ping that fails: ${name}`, async () => {
      const failing = program(`${stderr.map((line) => `echo "${line}" >&2`).join('\n')}\nexit 2`);
      const out = await checkIcmp(target('127.0.0.1'), ctx(), undefined, failing.path);
      assert.deepEqual(out.error, { class: 'other', message });
      assert.equal(out.ok, false);
    });
  }
});
