import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';

/** Every message of a stream (or of one subject filter), in order, without consuming it. */
export async function readStream(
  nc: NatsConnection,
  stream: string,
  filter?: string,
): Promise<{ subject: string; data: any; msgId?: string }[]> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(stream);
  const out: { subject: string; data: any; msgId?: string }[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (!m) continue;
    if (filter && !matches(filter, m.subject)) continue;
    out.push({ subject: m.subject, data: m.json(), msgId: m.header?.get('Nats-Msg-Id') || undefined });
  }
  return out;
}

function matches(filter: string, subject: string): boolean {
  const f = filter.split('.');
  const s = subject.split('.');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '>') return true;
    if (f[i] !== '*' && f[i] !== s[i]) return false;
  }
  return f.length === s.length;
}

/**
 * Resolves once `check()` holds, re-checking after every `everyMs`. For states only visible by
 * asking (rows in a database, messages in a stream); bounded, so a test fails rather than hangs.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  what: string,
  timeoutMs = 15_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export async function publishJson(nc: NatsConnection, subject: string, data: unknown, msgID?: string): Promise<void> {
  await jetstream(nc).publish(subject, JSON.stringify(data), msgID ? { msgID } : undefined);
}
