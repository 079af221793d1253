import { Resolver } from 'node:dns/promises';
import type { CaaRecord } from 'node:dns';
import { isIP, isIPv6 } from 'node:net';
import { performance } from 'node:perf_hooks';
import { BlockedAddressError, refuses, resolveAllowed } from '../../../../shared/src/net/lookup.ts';
import { abortCell, CANCELLED, createSignalWatch, TIMED_OUT, type RunCell } from '../abort.ts';
import type { CheckError } from '../classify.ts';
import type { ProbeContext, ProbeOutcome } from './probe.ts';

export const dnsRecordTypes = ['A', 'AAAA', 'CNAME', 'MX', 'NS', 'TXT', 'SOA', 'SRV', 'CAA', 'PTR'] as const;
export type DnsRecordType = (typeof dnsRecordTypes)[number];

export type DnsTarget = {
  /** The DNS server to ask (a host name or an IP address); null for the system's resolvers. */
  resolver: string | null;
  /** Port of `resolver`; the system's resolvers keep their own. */
  port: number;
  name: string;
  record_type: DnsRecordType;
  timeout_ms: number;
};

type DnsAnswer = { type: string; value: string; ttl: number };
/** What the check shows of the reply: its response code and its answers, in the order received. */
type DnsReply = { rcode: string; answers: DnsAnswer[] };

/** A failure found before the query was sent (the resolver's address), reported as is. */
class ResolverAddressFailure extends Error {
  constructor(readonly failure: CheckError) {
    super(failure.message);
  }
}

// Node reports TTLs for A and AAAA answers only; every other answer carries ttl 0 (not known).
const withoutTtl = (type: DnsRecordType, values: readonly string[]): DnsAnswer[] => values.map((value) => ({ type, value, ttl: 0 }));

/** CAA in zone-file form, e.g. `0 issue "letsencrypt.org"`: Node gives the tag as the record's one other key. */
function caaValue(record: CaaRecord): string {
  const [tag = '', value = ''] = Object.entries(record).find(([key]) => key !== 'critical') ?? [];
  const quoted = String(value).replace(/["\\]/g, '\\$&');
  return `${record.critical} ${tag} "${quoted}"`;
}

// Each maps the library's answer straight to ours: one promise and one list per query.
const queries: Record<DnsRecordType, (resolver: Resolver, name: string) => Promise<DnsAnswer[]>> = {
  A: (r, name) => r.resolve4(name, { ttl: true }).then((list) => list.map((a) => ({ type: 'A', value: a.address, ttl: a.ttl }))),
  AAAA: (r, name) => r.resolve6(name, { ttl: true }).then((list) => list.map((a) => ({ type: 'AAAA', value: a.address, ttl: a.ttl }))),
  CNAME: (r, name) => r.resolveCname(name).then((list) => withoutTtl('CNAME', list)),
  NS: (r, name) => r.resolveNs(name).then((list) => withoutTtl('NS', list)),
  PTR: (r, name) => r.resolvePtr(name).then((list) => withoutTtl('PTR', list)),
  MX: (r, name) =>
    r.resolveMx(name).then((list) =>
      withoutTtl(
        'MX',
        list.map((mx) => `${mx.priority} ${mx.exchange}`),
      ),
    ),
  TXT: (r, name) =>
    r.resolveTxt(name).then((list) =>
      withoutTtl(
        'TXT',
        list.map((chunks) => chunks.join('')),
      ),
    ),
  SOA: (r, name) =>
    r
      .resolveSoa(name)
      .then((soa) =>
        withoutTtl('SOA', [`${soa.nsname} ${soa.hostmaster} ${soa.serial} ${soa.refresh} ${soa.retry} ${soa.expire} ${soa.minttl}`]),
      ),
  SRV: (r, name) =>
    r.resolveSrv(name).then((list) =>
      withoutTtl(
        'SRV',
        list.map((v) => `${v.priority} ${v.weight} ${v.port} ${v.name}`),
      ),
    ),
  CAA: (r, name) => r.resolveCaa(name).then((list) => withoutTtl('CAA', list.map(caaValue))),
};

const notAllowed = (ip: string) => new ResolverAddressFailure({ class: 'other', message: `Resolver address ${ip} is not allowed` });

/** resolverAddress of a resolver given as an IP address (or none): no lookup, so no wait. */
function resolverAddressNow(target: DnsTarget, ctx: ProbeContext): string | null {
  if (target.resolver === null) return null;
  if (refuses(ctx.policy, target.resolver)) throw notAllowed(target.resolver);
  return target.resolver;
}

/**
 * The address the query goes to, under the address policy like every address a check dials; null
 * for the system's resolvers, which the operator configured and the policy does not govern.
 */
async function resolverAddress(target: DnsTarget, ctx: ProbeContext): Promise<string | null> {
  if (target.resolver === null || isIP(target.resolver) !== 0) return resolverAddressNow(target, ctx);
  try {
    const [first] = await resolveAllowed(ctx.policy, ctx.resolve, target.resolver);
    if (first !== undefined) return first.address;
  } catch (err) {
    if (err instanceof BlockedAddressError) throw notAllowed(err.address);
  }
  throw new ResolverAddressFailure({ class: 'dns', message: `Could not resolve the DNS server ${target.resolver}` });
}

/**
 * One c-ares channel per server asked (and time limit and source address), kept: setting a channel
 * up costs several times the query itself. Checks share it, so one check's end never cancels the
 * channel (that would cancel every query on it): a query outliving its check ends at the
 * channel's own time limit, the check's timeout.
 */
const resolvers = new Map<string, Resolver>();
const MAX_RESOLVERS = 1_000;

function resolverFor(address: string | null, target: DnsTarget, ctx: ProbeContext): Resolver {
  const key = `${address ?? 'system'}|${target.port}|${target.timeout_ms}|${ctx.localAddress ?? ''}`;
  let resolver = resolvers.get(key);
  if (resolver !== undefined) return resolver;
  resolver = new Resolver({ timeout: target.timeout_ms, tries: 1 });
  if (ctx.localAddress !== undefined) {
    if (isIPv6(ctx.localAddress)) resolver.setLocalAddress('0.0.0.0', ctx.localAddress);
    else resolver.setLocalAddress(ctx.localAddress);
  }
  if (address !== null) resolver.setServers([isIPv6(address) ? `[${address}]:${target.port}` : `${address}:${target.port}`]);
  if (resolvers.size >= MAX_RESOLVERS) resolvers.delete(resolvers.keys().next().value!);
  resolvers.set(key, resolver);
  return resolver;
}

/**
 * The channel of a target whose resolver is an address (or the system's), found once per target
 * and agent context: the agent builds each monitor's target once and checks it all day (run.ts).
 * A refused address is not kept: it is refused again at each check.
 */
const channels = new WeakMap<DnsTarget, { ctx: ProbeContext; resolver: Resolver }>();

function channelOf(target: DnsTarget, ctx: ProbeContext): Resolver {
  const kept = channels.get(target);
  if (kept !== undefined && kept.ctx === ctx) return kept.resolver;
  const resolver = resolverFor(resolverAddressNow(target, ctx), target, ctx);
  channels.set(target, { ctx, resolver });
  return resolver;
}

/** How a query the check stopped waiting for ends (the cell says why). */
const ENDED = new Error('Check ended');

function ask(address: string | null, target: DnsTarget, ctx: ProbeContext): Promise<DnsAnswer[]> {
  return queries[target.record_type](resolverFor(address, target, ctx), target.name);
}

async function query(target: DnsTarget, ctx: ProbeContext, cell: RunCell): Promise<DnsAnswer[]> {
  const address = await resolverAddress(target, ctx);
  // The check may have ended while the resolver's name was looked up: send nothing then.
  if (cell.reason !== null) throw ENDED;
  return ask(address, target, ctx);
}

/** How c-ares reports each response code that is not an answer; codes without a reply are elsewhere. */
function replyFailure(code: string, target: DnsTarget): { rcode: string; message: string } | null {
  const { name, record_type: type } = target;
  switch (code) {
    case 'ENOTFOUND':
      return { rcode: 'NXDOMAIN', message: `No such domain: ${name}` };
    case 'ENODATA':
      return { rcode: 'NOERROR', message: `No ${type} records for ${name}` };
    case 'ESERVFAIL':
      return { rcode: 'SERVFAIL', message: `DNS server failed to answer for ${name} (SERVFAIL)` };
    case 'EREFUSED':
      return { rcode: 'REFUSED', message: `DNS server refused the query for ${name} (REFUSED)` };
    case 'EFORMERR':
      return { rcode: 'FORMERR', message: `DNS server could not read the query for ${name} (FORMERR)` };
    case 'ENOTIMP':
      return { rcode: 'NOTIMP', message: `DNS server does not support the query for ${name} (NOTIMP)` };
    default:
      return null;
  }
}

/** The failure of a check that ended without answers, and the reply's code when a reply came. */
function failure(err: unknown, cell: RunCell, target: DnsTarget): { error: CheckError; reply: DnsReply | null } {
  if (cell.reason === TIMED_OUT) return { error: { class: 'timeout', message: `Timed out after ${target.timeout_ms} ms` }, reply: null };
  if (cell.reason === CANCELLED) return { error: { class: 'other', message: 'Check cancelled' }, reply: null };
  if (err instanceof ResolverAddressFailure) return { error: err.failure, reply: null };
  const code = (err as NodeJS.ErrnoException | null)?.code ?? '';
  const replied = replyFailure(code, target);
  if (replied !== null) return { error: { class: 'dns', message: replied.message }, reply: { rcode: replied.rcode, answers: [] } };
  if (code === 'ETIMEOUT') return { error: { class: 'timeout', message: `Timed out after ${target.timeout_ms} ms` }, reply: null };
  if (code === 'ECONNREFUSED') return { error: { class: 'refused', message: 'Connection refused by the DNS server' }, reply: null };
  return { error: { class: 'dns', message: `DNS query failed for ${target.name} (${code || 'unknown error'})` }, reply: null };
}

const round3 = (ms: number) => Math.round(ms * 1000) / 1000;

/**
 * A reply's details are shown whenever a reply came; a timeout or a refused connection has none.
 * Built field by field: this runs for every check.
 */
function outcome(startedAt: number, error: CheckError | null, reply: DnsReply | null): ProbeOutcome {
  const total = round3(performance.now() - startedAt);
  const out: ProbeOutcome = {
    ok: error === null,
    status_code: null,
    timings: { dns: 0, connect: 0, tls: 0, ttfb: total, total },
    error,
    observed: { response_time: total },
  };
  if (reply !== null) {
    out.observed.dns_answers = reply.answers.map((a) => a.value);
    out.details = { dns: reply };
  }
  return out;
}

const watch = createSignalWatch();

/** Asks one DNS server (or the system's) for the records of a name: up when at least one answer comes back. */
export async function checkDns(target: DnsTarget, ctx: ProbeContext, signal?: AbortSignal): Promise<ProbeOutcome> {
  const startedAt = performance.now();
  if (signal?.aborted) return outcome(startedAt, { class: 'other', message: 'Check cancelled' }, null);
  // Asking a server by its address (or the system's), the query is all there is to time, and its
  // channel ends it at the check's time limit (ETIMEOUT, one try): no timer of the check's own.
  // A server given by name is looked up first, under the check's timer.
  const byAddress = channels.get(target)?.ctx === ctx || target.resolver === null || isIP(target.resolver) !== 0;
  const cell: RunCell = { reason: null, onAbort: null };
  const timer = byAddress ? null : setTimeout(abortCell, target.timeout_ms, cell, TIMED_OUT);
  const unwatch = signal === undefined ? null : watch(signal, cell);
  try {
    const asked = byAddress ? queries[target.record_type](channelOf(target, ctx), target.name) : query(target, ctx, cell);
    const answers = await new Promise<DnsAnswer[]>((resolve, reject) => {
      cell.onAbort = () => reject(ENDED);
      asked.then(resolve, reject);
    });
    // c-ares turns an empty NOERROR reply into ENODATA, so an answer list here is never empty.
    return outcome(startedAt, null, { rcode: 'NOERROR', answers });
  } catch (err) {
    const { error, reply } = failure(err, cell, target);
    return outcome(startedAt, error, reply);
  } finally {
    cell.onAbort = null;
    if (timer !== null) clearTimeout(timer);
    unwatch?.();
  }
}
