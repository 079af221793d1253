import { randomUUID } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { loadConfig, type Config } from '../../shared/src/config.ts';
import { CheckResult, type Assignment } from '../../shared/src/contracts/monitoring.ts';
import type { Names } from '../../shared/src/subjects.ts';
import { startAgent, type AgentOptions, type RunningAgent } from '../../probe-agent/src/agent.ts';
import { testLog } from '../harness/log.ts';

/** Captured with every other log line of the run, and searched for secrets (test/run.ts). */
export const quietLog = testLog;

/** Tests run the agent 5x faster: a 5 s interval is a 1 s slot, presence ttl 3 s. */
export const timeScale = 0.2;
export const slotMs = 5_000 * timeScale;

export function agentConfig(namespace: string, env: Record<string, string> = {}): Config {
  return loadConfig({ NATS_NAMESPACE: namespace, LOG_LEVEL: 'silent', ...env });
}

export function runAgent(opts: Omit<AgentOptions, 'log' | 'port'> & Partial<Pick<AgentOptions, 'log' | 'port'>>): Promise<RunningAgent> {
  return startAgent({ log: quietLog, port: 0, timeScale, ...opts });
}

export function assignment(overrides: Partial<Assignment> & Pick<Assignment, 'region' | 'url'>): Assignment {
  return {
    monitor_id: randomUUID(),
    project_id: randomUUID(),
    method: 'GET',
    valid_http_codes: [200],
    basic_auth_username: null,
    basic_auth_password_sealed: null,
    interval: 5,
    timeout: 2,
    follow_redirects: true,
    revision: new Date().toISOString(),
    ...overrides,
  };
}

/** Writes an assignment as the control plane does. */
export async function assign(kv: KV, names: Names, a: Assignment): Promise<void> {
  await kv.put(names.keys.assignment(a.region, a.monitor_id), JSON.stringify(a));
}

export type StoredResult = { seq: number; subject: string; msgId: string | undefined; result: CheckResult };

/** Every message in RESULTS on subject (all of them when omitted), in stream order. */
export async function storedResults(nc: NatsConnection, names: Names, subject?: string): Promise<StoredResult[]> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(names.streams.results);
  const out: StoredResult[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const m = await jsm.streams.getMessage(names.streams.results, { seq }).catch(() => null);
    if (!m || (subject !== undefined && m.subject !== subject)) continue;
    out.push({ seq, subject: m.subject, msgId: m.header.get('Nats-Msg-Id') || undefined, result: CheckResult.parse(m.json()) });
  }
  return out;
}

/** How many messages RESULTS holds on subject. */
export async function storedCount(nc: NatsConnection, names: Names, subject: string): Promise<number> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(names.streams.results, { subjects_filter: subject });
  return info.state.subjects?.[subject] ?? 0;
}

/** Every result published on RESULTS subjects, duplicates the stream drops included. */
export async function recordPublishes(nc: NatsConnection, names: Names) {
  const seen: CheckResult[] = [];
  const sub = nc.subscribe(names.subjects.results, {
    callback: (_err, m) => {
      seen.push(CheckResult.parse(m.json()));
    },
  });
  await nc.flush();
  return {
    seen,
    of: (monitorId: string) => seen.filter((r) => r.monitor_id === monitorId),
    /** Slots published more than once. */
    repeatedSlots(): string[] {
      const counts = new Map<string, number>();
      for (const r of seen) {
        const slot = `${r.monitor_id}@${r.scheduled_at}`;
        counts.set(slot, (counts.get(slot) ?? 0) + 1);
      }
      return [...counts].filter(([, n]) => n > 1).map(([slot]) => slot);
    },
    stop: () => sub.unsubscribe(),
  };
}

/** Bounded polling for what no event announces (stream counts, agent counters). */
export async function eventually<T>(
  probe: () => T | Promise<T>,
  what: string,
  timeoutMs = 15_000,
): Promise<Exclude<T, false | 0 | '' | null | undefined>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as Exclude<T, false | 0 | '' | null | undefined>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
