import { settingsOf, type MonitorType, type SettingsOf } from '../../../../shared/src/contracts/checks.ts';
import type { Assignment } from '../../../../shared/src/contracts/monitoring.ts';
import { assertionVerdict, evaluateAssertions } from '../../../../shared/src/checks/assertions.ts';
import { open } from '../../../../shared/src/crypto.ts';
import type { CheckOutcome, CheckTarget, Checker } from '../check.ts';
import { checkDns } from './dns.ts';
import { checkGrpc } from './grpc.ts';
import { checkIcmp } from './icmp.ts';
import { runSteps } from './multistep.ts';
import { httpProbeOutcome, noTimings, type ProbeContext, type ProbeOutcome, type ProbeResult } from './probe.ts';
import { checkTcp } from './tcp.ts';
import { checkWebSocket } from './websocket.ts';

export type ProbeRunner = (a: Assignment, signal: AbortSignal) => Promise<ProbeResult>;

const failed = (message: string): ProbeResult => ({
  ok: false,
  status_code: null,
  timings: noTimings,
  error: { class: 'other', message },
  observed: {},
  degraded: false,
});

/** host and port of `tcp://host:port`, `grpc://host:port`; the host without IPv6 brackets. */
function hostPort(url: URL, defaultPort?: number): { host: string; port: number } | undefined {
  const port = url.port === '' ? defaultPort : Number(url.port);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === '' || port === undefined || !Number.isInteger(port)) return undefined;
  return { host, port };
}

export type ProbeRunnerOptions = {
  checker: Pick<Checker, 'run'>;
  ctx: ProbeContext;
  /** Opens sealed passwords and settings; undefined when the agent was given no key. */
  key: Buffer | undefined;
  /** The HTTP target of an assignment (its basic-auth password opened), or the outcome of a password this agent cannot open. */
  httpTarget: (a: Assignment) => { target: CheckTarget } | { outcome: CheckOutcome };
};

export function createProbeRunner(opts: ProbeRunnerOptions): ProbeRunner {
  const { checker, ctx } = opts;

  function settings<T extends MonitorType>(type: T, a: Assignment): { ok: true; value: SettingsOf<T> } | { ok: false; message: string } {
    let raw: unknown = {};
    if (a.settings_sealed) {
      if (opts.key === undefined) return { ok: false, message: "Cannot open the monitor's settings: this agent has no AGENT_KEY" };
      try {
        raw = JSON.parse(open(a.settings_sealed, opts.key));
      } catch {
        return { ok: false, message: "Cannot open the monitor's settings: AGENT_KEY does not match the control plane's key" };
      }
    }
    const parsed = settingsOf[type].safeParse(raw);
    if (!parsed.success) return { ok: false, message: `The monitor's ${type} settings are not ones this agent understands` };
    return { ok: true, value: parsed.data as SettingsOf<T> };
  }

  const headerValues = (list: ReadonlyArray<{ name: string; value: string | null }>) =>
    list.filter((h): h is { name: string; value: string } => h.value !== null);

  type Run = (signal: AbortSignal) => Promise<ProbeOutcome | ProbeResult>;
  // A copy per check: the runner completes each outcome in place.
  const done =
    (outcome: ProbeOutcome | ProbeResult): Run =>
    () =>
      Promise.resolve({ ...outcome });

  /**
   * What a check of this assignment runs, worked out once: its settings opened and parsed, its
   * target built (a check function never changes its target). An assignment is not changed in
   * place (a new one replaces it), so the agent keeps this for as long as it holds the assignment.
   */
  function prepare(a: Assignment): Run {
    const type = a.type ?? 'http';
    const timeout_ms = a.timeout * 1000;
    if (type === 'http') {
      const t = opts.httpTarget(a);
      if ('outcome' in t) return done(httpProbeOutcome(t.outcome));
      const s = settings('http', a);
      if (!s.ok) return done(failed(s.message));
      const needs = new Set((a.assertions ?? []).map((x) => x.source));
      const target: CheckTarget = {
        ...t.target,
        headers: headerValues(s.value.headers),
        body: s.value.body,
        capture: { headers: needs.has('header'), body: needs.has('body') || needs.has('json') },
      };
      return async (signal) => httpProbeOutcome(await checker.run(target, signal));
    }
    let url: URL;
    try {
      url = new URL(a.url);
    } catch {
      return done(failed('Invalid URL'));
    }
    switch (type) {
      case 'tcp': {
        const s = settings('tcp', a);
        if (!s.ok) return done(failed(s.message));
        const hp = hostPort(url);
        if (!hp) return done(failed('A TCP monitor needs tcp://host:port'));
        const target = { ...hp, tls: s.value.tls, send: s.value.send, expect: s.value.expect, timeout_ms };
        return (signal) => checkTcp(target, ctx, signal);
      }
      case 'dns': {
        const s = settings('dns', a);
        if (!s.ok) return done(failed(s.message));
        const name = url.hostname;
        if (!name) return done(failed('A DNS monitor needs dns://<name to look up>'));
        const target = { resolver: s.value.resolver, port: s.value.resolver_port, name, record_type: s.value.record_type, timeout_ms };
        return (signal) => checkDns(target, ctx, signal);
      }
      case 'icmp': {
        const s = settings('icmp', a);
        if (!s.ok) return done(failed(s.message));
        const host = url.hostname.replace(/^\[|\]$/g, '');
        if (!host) return done(failed('An ICMP monitor needs icmp://host'));
        const target = { host, count: s.value.count, timeout_ms };
        return (signal) => checkIcmp(target, ctx, signal);
      }
      case 'websocket': {
        const s = settings('websocket', a);
        if (!s.ok) return done(failed(s.message));
        const target = { url: a.url, headers: headerValues(s.value.headers), send: s.value.send, expect: s.value.expect, timeout_ms };
        return (signal) => checkWebSocket(target, ctx, signal);
      }
      case 'grpc': {
        const s = settings('grpc', a);
        if (!s.ok) return done(failed(s.message));
        const tls = url.protocol === 'grpcs:';
        const hp = hostPort(url, tls ? 443 : 80);
        if (!hp) return done(failed('A gRPC monitor needs grpc://host:port or grpcs://host:port'));
        const target = { ...hp, tls, service: s.value.service, metadata: headerValues(s.value.metadata), timeout_ms };
        return (signal) => checkGrpc(target, ctx, signal);
      }
      case 'multistep': {
        const s = settings('multistep', a);
        if (!s.ok) return done(failed(s.message));
        const { steps } = s.value;
        return (signal) => runSteps(steps, { checker, timeoutMs: timeout_ms, followRedirects: a.follow_redirects, signal });
      }
    }
  }

  const prepared = new WeakMap<Assignment, Run>();

  return async (a, signal) => {
    let run = prepared.get(a);
    if (run === undefined) prepared.set(a, (run = prepare(a)));
    const outcome = await run(signal);
    if ('degraded' in outcome) return outcome;
    // Each check's outcome is its own object: completed in place, not copied.
    const result = outcome as ProbeResult;
    const assertions = a.assertions ?? [];
    if (assertions.length === 0) {
      result.degraded = false;
      return result;
    }
    const outcomes = evaluateAssertions(assertions, outcome.observed);
    const verdict = assertionVerdict(outcomes);
    result.assertions = outcomes;
    if (outcome.ok && verdict.failed) {
      result.ok = false;
      result.error = { class: 'assertion', message: verdict.failed.message ?? 'Assertion failed' };
      result.degraded = false;
    } else {
      result.degraded = outcome.ok && verdict.degraded !== null;
    }
    return result;
  };
}
