import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Sql } from '../../control-plane/src/platform/db/sql.ts';
import type { Names } from '../../shared/src/subjects.ts';

export const graceS = 60;

/** Heartbeats that are up and next expected hours from now: armed, but quiet during the run. */
export async function insertQuiet(sql: Sql, projectId: string, n: number): Promise<void> {
  await sql`
    insert into heartbeats (project_id, name, grace_period, period, status, next_ping_at, last_ping_at, last_ping_kind)
    select ${projectId}, 'job ' || g, ${graceS}, 3600, 'up', now() + interval '1 hour' + g * interval '50 ms', now(), 'success'
    from generate_series(1, ${n}) g`;
}

/**
 * Makes `ids` late, their grace running out within the second that starts at `at` (ms since the
 * epoch). With `notify`, the way an API update does (updated_at bumped, so the change trigger
 * tells the deadline role); without, silently, for a role that will load them at its start.
 * Returns when each one's grace runs out.
 */
export async function expireAt(sql: Sql, ids: readonly string[], at: number, notify: boolean): Promise<Map<string, number>> {
  const due = new Map(ids.map((id, i) => [id, at + ((i * 997) % 1000)]));
  const rows = [...due].map(([id, ms]) => ({ id, next: new Date(ms - graceS * 1000).toISOString() }));
  for (let i = 0; i < rows.length; i += 5_000) {
    const chunk = rows.slice(i, i + 5_000);
    await sql`
      update heartbeats h set status = 'late', next_ping_at = v.next::timestamptz,
        updated_at = case when ${notify} then now() else h.updated_at end
      from unnest(${sql.array(chunk.map((r) => r.id))}::uuid[], ${sql.array(chunk.map((r) => r.next))}::text[]) as v(id, next)
      where h.id = v.id`;
  }
  return due;
}

/**
 * The baseline: a poller that asks the database every second for heartbeats whose grace ran out,
 * claims them with a conditional update and publishes their events, as polling monitors do.
 */
export function startPoller(sql: Sql, nc: NatsConnection, names: Names, everyMs = 1_000): { stop(): Promise<void> } {
  const js = jetstream(nc);
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const started = Date.now();
      const rows = (await sql`
        update heartbeats set status = 'down', down_since = next_ping_at + grace_period * interval '1 second'
        where status = 'late' and active and next_ping_at + grace_period * interval '1 second' <= now()
        returning id, project_id, name`) as unknown as { id: string; project_id: string; name: string }[];
      await Promise.all(
        rows.map((r) =>
          js.publish(
            names.subjects.event(r.project_id, 'heartbeat.down'),
            JSON.stringify({ kind: 'heartbeat.down', subject: { type: 'heartbeat', id: r.id, name: r.name } }),
          ),
        ),
      );
      await new Promise((r) => setTimeout(r, Math.max(0, everyMs - (Date.now() - started))));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

const SUBJECT_ID = '"subject":{"type":"heartbeat","id":"';

/** Resolves with the delay of each expected down event after its instant, once all arrived or at the time limit. */
export function awaitDownEvents(
  nc: NatsConnection,
  names: Names,
  due: Map<string, number>,
  limitMs: number,
): Promise<{ delays: Float64Array; missing: number; firstAt: number; lastAt: number }> {
  const delays = new Float64Array(due.size);
  let got = 0;
  let firstAt = NaN;
  let lastAt = NaN;
  const seen = new Set<string>();
  return new Promise((resolve) => {
    const sub = nc.subscribe(`${names.namespace}.events.*.heartbeat.down`, {
      callback: (_err, msg) => {
        const now = Date.now();
        // The id is read out of the text rather than by parsing every event: the subscriber
        // shares the deadline role's process and should take as little of it as it can.
        const text = msg.string();
        const at0 = text.indexOf(SUBJECT_ID);
        const id =
          at0 >= 0
            ? text.slice(at0 + SUBJECT_ID.length, at0 + SUBJECT_ID.length + 36)
            : (JSON.parse(text) as { subject?: { id?: string } }).subject?.id;
        const at = id === undefined ? undefined : due.get(id);
        if (at === undefined || seen.has(id!)) return;
        seen.add(id!);
        delays[got++] = now - at;
        if (got === 1) firstAt = now;
        lastAt = now;
        if (got === due.size) finish();
      },
    });
    const timer = setTimeout(() => finish(), limitMs);
    function finish() {
      clearTimeout(timer);
      sub.unsubscribe();
      resolve({ delays: delays.subarray(0, got), missing: due.size - got, firstAt, lastAt });
    }
  });
}
