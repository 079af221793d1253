import { randomUUID } from 'node:crypto';
import type postgres from 'postgres';
import { Agent, request } from 'undici';
import { startTarget, type Target } from '../harness/http.ts';
import type { Deployment } from './deployment.ts';

/**
 * Steady client traffic and the client-side ledger of what the service acknowledged.
 *
 * - Heartbeat pings: every heartbeat is pinged in turn through one of the ping URLs (the control
 *   planes' and the probe agents' regional edges), POSTing a unique token as the body. Kinds
 *   follow a fixed pattern (success x4, fail x2), so each heartbeat goes down and up again; the
 *   pattern advances only on an acknowledged ping, and a refused ping is sent again (as a new
 *   request, elsewhere) until one is acknowledged, so the alerts owed are exactly the kind
 *   changes in the acknowledged sequence.
 * - Notification trigger calls with a unique token as the message, 202 = acknowledged.
 * - HTTP monitors checked by the probe agents against local targets; some of them are flipped
 *   down and up, each flip waiting until the service has seen it, so each flip owes one
 *   monitor.down and one monitor.up.
 * - Status page incidents published through the API with a unique token as their message, 201 =
 *   acknowledged: each owes one message to the page's webhook subscriber (the same receiver).
 */

export type PingKind = 'success' | 'fail';
export const pingPattern: readonly PingKind[] = ['success', 'success', 'success', 'success', 'fail', 'fail'];

export interface Acked {
  flow: 'ping' | 'trigger' | 'notice';
  token: string;
  /** Heartbeat, trigger or status page id. */
  subject: string;
  kind?: PingKind;
  /** Which URL took it. */
  via: string;
  sentAt: number;
  ackedAt: number;
  cycle: number;
}

export interface Ledger {
  acked: Acked[];
  /** The last acknowledged entry of each heartbeat and trigger. */
  latest: Map<string, Acked>;
  /** Requests not acknowledged, by flow, URL and reason. */
  refusals: Map<string, number>;
  record(entry: Acked): void;
  refuse(flow: string, via: string, reason: string): void;
  /** Resolves once `done()` holds; re-evaluated on every acknowledgement. */
  until(done: () => boolean, what: string, timeoutMs: number): Promise<void>;
}

export function createLedger(): Ledger {
  const acked: Acked[] = [];
  const latest = new Map<string, Acked>();
  const refusals = new Map<string, number>();
  let waiters: { done: () => boolean; resolve: () => void }[] = [];
  return {
    acked,
    latest,
    refusals,
    record(entry) {
      acked.push(entry);
      latest.set(entry.subject, entry);
      waiters = waiters.filter((w) => (w.done() ? (w.resolve(), false) : true));
    },
    refuse(flow, via, reason) {
      const key = `${flow} via ${via}: ${reason}`;
      refusals.set(key, (refusals.get(key) ?? 0) + 1);
    },
    until(done, what, timeoutMs) {
      if (done()) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const w = {
          done,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
        const timer = setTimeout(() => {
          waiters = waiters.filter((x) => x !== w);
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
        }, timeoutMs);
        waiters.push(w);
      });
    },
  };
}

export interface WorkloadMonitor {
  id: string;
  target: Target;
  /** Flipped down and up by the traffic; the others stay up. */
  flips: boolean;
}

export interface Workload {
  heartbeats: string[];
  /** Heartbeats that failed once and are never pinged again: their alerts are re-notified and escalated through the run. */
  stuck: string[];
  triggerId: string;
  /** A status page with one webhook subscriber (the receiver, at /status-subscriber). */
  statusPageId: string;
  monitors: WorkloadMonitor[];
  interval: number;
  close(): Promise<void>;
}

/** Heartbeats left down all run, whose alerts the response policy reminds and escalates. */
const STUCK_HEARTBEATS = 6;

/** What the traffic runs against: a webhook integration, heartbeats, a trigger, monitors with their targets. */
export async function createWorkload(dep: Deployment, opts: { heartbeats: number; monitors: number; flipping: number }): Promise<Workload> {
  const { api, projectId } = dep;
  const targets: Target[] = [];
  const close = async () => {
    await Promise.all(targets.map((t) => t.close()));
  };
  try {
    const created = async (path: string, body: unknown) => {
      const res = await api('POST', path, body);
      if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.data.id as string;
    };
    const integrationId = await created('/integrations', {
      project_id: projectId,
      name: 'receiver',
      type: 'webhook',
      config: { url: `${dep.sink.url}/hook` },
    });
    const triggerId = await created('/triggers', {
      project_id: projectId,
      name: 'deploys',
      default_message: 'deployed',
      integration_ids: [integrationId],
    });
    // A period and grace of an hour: only pings change these heartbeats while the suite runs.
    const heartbeats: string[] = [];
    for (let i = 0; i < opts.heartbeats; i++) {
      heartbeats.push(await created('/heartbeats', { project_id: projectId, name: `job ${i + 1}`, grace_period: 3600, period: 3600 }));
    }
    // The response policy (ADR 0032) under every fault: a reminder every minute and an escalation
    // after two, to a second integration on the same receiver. The stuck heartbeats fail once and
    // are never pinged again, so their alerts are reminded all through the run, several at once.
    const secondLine = await created('/integrations', {
      project_id: projectId,
      name: 'second line',
      type: 'webhook',
      config: { url: `${dep.sink.url}/escalation` },
    });
    const policy = await api('PUT', `/projects/${projectId}`, {
      renotify_minutes: 1,
      escalate_after_minutes: 2,
      escalation_integration_ids: [secondLine],
    });
    if (policy.status !== 200) throw new Error(`PUT /projects: ${policy.status} ${JSON.stringify(policy.body)}`);
    const stuck: string[] = [];
    for (let i = 0; i < STUCK_HEARTBEATS; i++) {
      const id = await created('/heartbeats', { project_id: projectId, name: `stuck job ${i + 1}`, grace_period: 3600, period: 3600 });
      const failed = await send('POST', `${dep.controlPlanes[0]!.url}/heartbeat/${id}/fail`);
      if (!('status' in failed) || failed.status !== 200) throw new Error(`a stuck heartbeat's fail ping: ${JSON.stringify(failed)}`);
      stuck.push(id);
    }
    const statusPageId = await created('/status-pages', { project_id: projectId, title: 'Reliability' });
    await created(`/status-pages/${statusPageId}/subscribers`, { type: 'webhook', url: `${dep.sink.url}/status-subscriber` });
    const interval = 5;
    const monitors: WorkloadMonitor[] = [];
    for (let i = 0; i < opts.monitors; i++) {
      const target = await startTarget({ status: 200, body: 'ok' });
      targets.push(target);
      const id = await created('/monitors', {
        project_id: projectId,
        name: `site ${i + 1}`,
        url: `${target.url}/health`,
        interval,
        timeout: 2,
        regions: [dep.region],
      });
      monitors.push({ id, target, flips: i < opts.flipping });
    }
    return { heartbeats, stuck, triggerId, statusPageId, monitors, interval, close };
  } catch (err) {
    await close();
    throw err;
  }
}

export interface TrafficOptions {
  /** Time between two pings of one heartbeat. */
  pingEveryMs: number;
  triggerEveryMs: number;
  /** Time between two incidents published on the status page. */
  noticeEveryMs: number;
  /** How long a flipped monitor stays up before the next flip. */
  flipDwellMs: number;
}

export interface Traffic {
  /** Starts every generator (the cycle number goes into the ledger). */
  start(cycle: number): void;
  /** Stops every generator once its last request was acknowledged and every flipped monitor is up again. */
  stop(): Promise<void>;
  /** Flips per monitor whose down (and then up) the service showed. */
  flips: Map<string, { downs: number; ups: number }>;
  /** Heartbeats whose last ping was never acknowledged (the generator gave up): their state is not checked. */
  stranded: Set<string>;
  /** Problems of the generators themselves (a flip that never showed). */
  problems: string[];
}

const dispatcher = new Agent({ keepAliveTimeout: 4_000, connect: { timeout: 5_000 } });

/** One request; the status, or the error code when there was no answer. */
export async function send(
  method: 'GET' | 'POST',
  url: string,
  opts: { body?: string; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<{ status: number; body: string; ms: number } | { error: string; ms: number }> {
  const started = Date.now();
  try {
    const res = await request(url, {
      method,
      dispatcher,
      ...(opts.body !== undefined ? { body: opts.body } : {}),
      ...(opts.headers ? { headers: opts.headers } : {}),
      headersTimeout: opts.timeoutMs ?? 20_000,
      bodyTimeout: opts.timeoutMs ?? 20_000,
    });
    const body = await res.body.text();
    return { status: res.statusCode, body, ms: Date.now() - started };
  } catch (err) {
    const e = err as { code?: string; name?: string };
    return { error: e.code ?? e.name ?? 'error', ms: Date.now() - started };
  }
}

const statusOf = async (db: postgres.Sql, id: string): Promise<number | undefined> => {
  try {
    const [row] = await db<{ status: number }[]>`select status from monitors where id = ${id}`;
    return row?.status;
  } catch {
    return undefined; // Postgres away: asked again
  }
};

/** Resolves once the monitor's stored status is `status` (1 up, 2 down). */
export async function monitorStatus(db: postgres.Sql, id: string, status: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await statusOf(db, id)) !== status) {
    if (Date.now() > deadline) throw new Error(`monitor ${id} did not reach status ${status} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export function createTraffic(dep: Deployment, workload: Workload, ledger: Ledger, opts: TrafficOptions): Traffic {
  const edges = [
    ...dep.controlPlanes.map((c, i) => ({ name: `control-plane-${i + 1}`, url: c.url })),
    ...dep.agents.map((a) => ({ name: `edge-${a.id}`, url: a.pingUrl })),
  ];
  const patternPos = new Map<string, number>(workload.heartbeats.map((id) => [id, 0]));
  const flips = new Map(workload.monitors.filter((m) => m.flips).map((m) => [m.id, { downs: 0, ups: 0 }]));
  const stranded = new Set<string>();
  const problems: string[] = [];
  let cycle = 0;
  let stopping = false;
  let stopGiveUpAt = Infinity;
  let wakeAll: (() => void)[] = [];
  let loops: Promise<void>[] = [];

  /** Waits `ms`, or less when a stop is requested. */
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      if (stopping || ms <= 0) return resolve();
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        wakeAll = wakeAll.filter((w) => w !== done);
        resolve();
      }, ms);
      wakeAll.push(done);
    });

  const pingLoop = async (heartbeatId: string, index: number) => {
    await pause(Math.floor((opts.pingEveryMs * index) / workload.heartbeats.length));
    let offset = 0;
    let lastAcked = true;
    for (;;) {
      if (stopping && lastAcked) return;
      if (stopping && Date.now() > stopGiveUpAt) {
        stranded.add(heartbeatId);
        return;
      }
      const pos = patternPos.get(heartbeatId)!;
      const kind = pingPattern[pos % pingPattern.length]!;
      const edge = edges[(index + offset) % edges.length]!;
      const token = randomUUID();
      const sentAt = Date.now();
      const res = await send('POST', `${edge.url}/heartbeat/${heartbeatId}${kind === 'fail' ? '/fail' : ''}`, {
        body: `rel ${token}`,
        headers: { 'content-type': 'text/plain' },
      });
      if ('status' in res && res.status === 200) {
        ledger.record({ flow: 'ping', token, subject: heartbeatId, kind, via: edge.name, sentAt, ackedAt: Date.now(), cycle });
        patternPos.set(heartbeatId, pos + 1);
        lastAcked = true;
        stranded.delete(heartbeatId);
        await pause(sentAt + opts.pingEveryMs - Date.now());
      } else {
        ledger.refuse('ping', edge.name, 'status' in res ? `HTTP ${res.status}` : res.error);
        lastAcked = false;
        offset++;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };

  /**
   * Calls to the control planes in turn, each with a unique token, one every `everyMs`: the answer
   * `acked` records it in the ledger; anything else is refused and sent again (a new token).
   */
  const callLoop = async (c: {
    flow: 'trigger' | 'notice';
    subject: string;
    everyMs: number;
    acked: number;
    request: (token: string) => { path: string; body: unknown; headers?: Record<string, string> };
  }) => {
    let i = 0;
    let lastAcked = true;
    for (;;) {
      if (stopping && (lastAcked || Date.now() > stopGiveUpAt)) return;
      const cp = dep.controlPlanes[i++ % dep.controlPlanes.length]!;
      const via = `control-plane-${dep.controlPlanes.indexOf(cp) + 1}`;
      const token = randomUUID();
      const sentAt = Date.now();
      const r = c.request(token);
      const res = await send('POST', `${cp.url}${r.path}`, {
        body: JSON.stringify(r.body),
        headers: { 'content-type': 'application/json', ...r.headers },
      });
      if ('status' in res && res.status === c.acked) {
        ledger.record({ flow: c.flow, token, subject: c.subject, via, sentAt, ackedAt: Date.now(), cycle });
        lastAcked = true;
        await pause(sentAt + c.everyMs - Date.now());
      } else {
        ledger.refuse(c.flow, via, 'status' in res ? `HTTP ${res.status}` : res.error);
        lastAcked = false;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };

  const triggerLoop = () =>
    callLoop({
      flow: 'trigger',
      subject: workload.triggerId,
      everyMs: opts.triggerEveryMs,
      acked: 202,
      request: (token) => ({ path: `/api/notify/${workload.triggerId}`, body: { message: `rel ${token}` } }),
    });

  // An incident published on the status page per call, its message the token: 201 = acknowledged.
  const noticeLoop = () =>
    callLoop({
      flow: 'notice',
      subject: workload.statusPageId,
      everyMs: opts.noticeEveryMs,
      acked: 201,
      request: (token) => ({
        path: `/status-pages/${workload.statusPageId}/incidents`,
        body: { title: 'Reliability notice', impact: 'none', status: 'resolved', message: `rel ${token}`, published: true },
        headers: { authorization: `Bearer ${dep.token}` },
      }),
    });

  /** Waits for the monitor to be down; true when told to stop while `unseen()` still holds. */
  const downOrStop = async (id: string, unseen: () => boolean, timeoutMs: number): Promise<boolean> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (stopping && unseen()) return true;
      if ((await statusOf(dep.db, id)) === 2) return false;
      if (Date.now() > deadline) throw new Error(`monitor ${id} did not reach status 2 within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  const flipLoop = async (m: WorkloadMonitor) => {
    const count = flips.get(m.id)!;
    const observe = 300_000;
    try {
      for (;;) {
        await pause(opts.flipDwellMs);
        if (stopping) return;
        m.target.respond({ status: 503, body: 'maintenance' });
        const served = m.target.requests.length;
        // Told to stop before any check saw the 503: switching back owes nothing (this runs
        // between two requests, so none can be answered 503 meanwhile).
        const stoppedEarly = await downOrStop(m.id, () => m.target.requests.length === served, observe);
        if (stoppedEarly) {
          m.target.respond({ status: 200, body: 'ok' });
          return;
        }
        count.downs++;
        m.target.respond({ status: 200, body: 'ok' });
        await monitorStatus(dep.db, m.id, 1, observe);
        count.ups++;
      }
    } catch (err) {
      m.target.respond({ status: 200, body: 'ok' });
      problems.push(`flipping ${m.id}: ${(err as Error).message}`);
    }
  };

  return {
    flips,
    stranded,
    problems,
    start(n) {
      cycle = n;
      stopping = false;
      stopGiveUpAt = Infinity;
      loops = [
        ...workload.heartbeats.map((id, i) => pingLoop(id, i)),
        triggerLoop(),
        noticeLoop(),
        ...workload.monitors.filter((m) => m.flips).map(flipLoop),
      ];
    },
    async stop() {
      stopping = true;
      stopGiveUpAt = Date.now() + 120_000;
      for (const w of wakeAll) w();
      wakeAll = [];
      await Promise.all(loops);
      loops = [];
    },
  };
}
