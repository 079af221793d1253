import type { KV, KvWatchEntry } from '@nats-io/kv';
import type { QueuedIterator } from '@nats-io/transport-node';
import { Assignment } from '../../../shared/src/contracts/monitoring.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import type { Names } from '../../../shared/src/subjects.ts';

export type AssignmentWatchOptions = {
  kv: KV;
  names: Names;
  region: string;
  log: Logger;
  onPut(key: string, assignment: Assignment): void;
  onDelete(key: string): void;
};

export type AssignmentWatch = { stop(): void };

/** The assignment stored under key, or why it cannot be used. */
export function parseAssignment(
  names: Names,
  region: string,
  key: string,
  value: Uint8Array,
): { ok: true; assignment: Assignment } | { ok: false; reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(value));
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  const parsed = Assignment.safeParse(json);
  if (!parsed.success) {
    return { ok: false, reason: parsed.error.issues.map((i) => `${i.path.join('.') || 'value'}: ${i.message}`).join('; ') };
  }
  const a = parsed.data;
  if (a.region !== region || key !== names.keys.assignment(a.region, a.monitor_id)) {
    return { ok: false, reason: `stored under ${key} but names monitor ${a.monitor_id} of region ${a.region}` };
  }
  return { ok: true, assignment: a };
}

/**
 * Watches KV `assignments` for this region: the current set first, then every change. A value
 * that does not parse is logged and skipped; the key keeps whatever it held before.
 */
export async function watchAssignments(opts: AssignmentWatchOptions): Promise<AssignmentWatch> {
  const iter: QueuedIterator<KvWatchEntry> = await opts.kv.watch({ key: opts.names.keys.regionAssignments(opts.region) });
  let stopped = false;
  void (async () => {
    try {
      for await (const e of iter) {
        try {
          if (e.operation !== 'PUT') {
            opts.onDelete(e.key);
            continue;
          }
          const parsed = parseAssignment(opts.names, opts.region, e.key, e.value);
          if (parsed.ok) opts.onPut(e.key, parsed.assignment);
          else opts.log.warn({ key: e.key, reason: parsed.reason }, 'ignored an invalid assignment');
        } catch (err) {
          opts.log.error({ err, key: e.key }, 'assignment change not applied');
        }
      }
    } catch (err) {
      if (!stopped) opts.log.error({ err }, 'assignment watch ended');
    }
  })();
  return {
    stop() {
      stopped = true;
      iter.stop();
    },
  };
}
