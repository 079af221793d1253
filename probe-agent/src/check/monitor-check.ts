import type { Assignment, CheckResult } from '../../../shared/src/contracts/monitoring.ts';
import { open } from '../../../shared/src/crypto.ts';
import { systemResolve } from '../../../shared/src/net/lookup.ts';
import { pause } from '../timing.ts';
import type { CheckOutcome, CheckTarget, Checker } from './check.ts';
import type { ProbeContext, ProbeResult } from './types/probe.ts';
import { createProbeRunner, type ProbeRunner } from './types/run.ts';

export type MonitorCheckOptions = {
  checker: Pick<Checker, 'run'>;
  agentId: string;
  region: string;
  /** Opens sealed basic-auth passwords; undefined when the agent was given no key. */
  key: Buffer | undefined;
  /** What checks of the other types need (the address policy above all); HTTP checks use `checker`. */
  probeContext?: ProbeContext;
  /** The agent's probe runner (shared with "test now"); made from the options above when left out. */
  probe?: ProbeRunner;
  now?: () => number;
};

/** Without a context given, checks of other types refuse private addresses: the safe side. */
const defaultProbeContext: ProbeContext = {
  policy: { blockPrivateTargets: true },
  resolve: systemResolve,
  userAgent: 'uptime-probe',
  maxBodyBytes: 1024 * 1024,
};

export type MonitorCheckRun = {
  assignment: Assignment;
  /** The slot this check belongs to (ms since the epoch). */
  scheduledAt: number;
  /** Wait before the re-check of a failure. */
  recheckPauseMs: number;
  /** Aborting cancels the check: no result comes out of it. */
  signal: AbortSignal;
};

/** Checks one slot of a monitor, re-checking a failure once; null when cancelled. */
export type MonitorCheck = (run: MonitorCheckRun) => Promise<CheckResult | null>;

const noTimings = { dns: 0, connect: 0, tls: 0, ttfb: 0, total: 0 };

function failed(message: string): CheckOutcome {
  return { ok: false, status_code: null, timings: noTimings, error: { class: 'other', message } };
}

/** The checker's target, or the outcome of a password this agent cannot open. */
export function targetOf(a: Assignment, key: Buffer | undefined): { target: CheckTarget } | { outcome: CheckOutcome } {
  let password: string | null = null;
  if (a.basic_auth_password_sealed !== null) {
    if (key === undefined) return { outcome: failed('Cannot open the basic-auth password: this agent has no AGENT_KEY') };
    try {
      password = open(a.basic_auth_password_sealed, key);
    } catch {
      return { outcome: failed("Cannot open the basic-auth password: AGENT_KEY does not match the control plane's key") };
    }
  }
  return {
    target: {
      url: a.url,
      method: a.method,
      valid_http_codes: a.valid_http_codes,
      basic_auth_username: a.basic_auth_username,
      basic_auth_password: password,
      timeout_ms: a.timeout * 1000,
      follow_redirects: a.follow_redirects,
    },
  };
}

export function createMonitorCheck(opts: MonitorCheckOptions): MonitorCheck {
  const now = opts.now ?? Date.now;

  const probe =
    opts.probe ??
    createProbeRunner({
      checker: opts.checker,
      ctx: opts.probeContext ?? defaultProbeContext,
      key: opts.key,
      httpTarget: (a) => targetOf(a, opts.key),
    });

  async function attempt(a: Assignment, signal: AbortSignal): Promise<{ outcome: ProbeResult; checkedAt: number }> {
    const checkedAt = now();
    const outcome = await probe(a, signal);
    return { outcome, checkedAt };
  }

  return async ({ assignment: a, scheduledAt, recheckPauseMs, signal }) => {
    let attempts = 1;
    let last = await attempt(a, signal);
    // One lost packet is not an outage: only a failure confirmed at once counts.
    if (!last.outcome.ok && !signal.aborted) {
      if (!(await pause(recheckPauseMs, signal))) return null;
      attempts = 2;
      last = await attempt(a, signal);
    }
    if (signal.aborted) return null;
    const { outcome, checkedAt } = last;
    return {
      monitor_id: a.monitor_id,
      region: opts.region,
      agent_id: opts.agentId,
      scheduled_at: new Date(scheduledAt).toISOString(),
      checked_at: new Date(checkedAt).toISOString(),
      ok: outcome.ok,
      status_code: outcome.status_code,
      timings: outcome.timings,
      error: outcome.error,
      attempts,
      ...(outcome.degraded ? { degraded: true } : {}),
      ...(outcome.assertions ? { assertions: outcome.assertions } : {}),
      ...(outcome.details ? { details: outcome.details } : {}),
      ...(a.type !== undefined && a.type !== 'http' ? { type: a.type } : {}),
    };
  };
}
