import { jetstreamManager } from '@nats-io/jetstream';
import type { Deployment } from './deployment.ts';
import { pingPattern, send, type Acked, type Ledger, type Traffic, type Workload } from './traffic.ts';

/**
 * Reads back what the service did with the traffic and compares it with the ledger: pings in the
 * ping log, heartbeat state, events on EVENTS, notifications at the webhook receiver (by their
 * Idempotency-Key), check results in Postgres against the requests the targets answered, status
 * page notices at the subscriber's webhook (by their Idempotency-Key).
 */

interface StreamEvent {
  id: string;
  kind: string;
  subject: string;
  message: string | undefined;
  /** Times the id is in the stream (more than once: republished outside the duplicate window). */
  copies: number;
  /** An alert step's alert and, for a reminder, its number. */
  alert: string | undefined;
  count: number | undefined;
}

interface Receipt {
  keys: Set<string>;
  /** Requests received for the event, retries of one key included. */
  requests: number;
}

/** Cumulative counts since the observer started; a cycle's figures are the difference of two. */
export interface Tally {
  acked: { pings: number; triggers: number; checks: number; alerts: number; steps: number; notices: number };
  lost: {
    /** Acknowledged pings missing from the ping log. */
    pings: number;
    /** Acknowledged trigger calls without their trigger.fired event. */
    triggers: number;
    /** Transitions the acknowledged pings and the flips owe, without an event. */
    alerts: number;
    /** Alert and trigger events without a notification at the receiver. */
    notifications: number;
    /** Checks the targets answered that are not stored. */
    checks: number;
    /**
     * Alert steps (ADR 0032) recorded on an alert without their event on EVENTS, steps overdue
     * (a reminder or escalation due and not taken), and step messages missing at the receiver.
     */
    steps: number;
    /** Status page incidents published (201) without their message at the page's webhook subscriber. */
    notices: number;
  };
  duplicated: {
    pings: number;
    triggers: number;
    alerts: number;
    /** Events notified under more than one Idempotency-Key. */
    notifications: number;
    /** Alerts nothing owed (a monitor that was never flipped, a heartbeat.late). */
    spurious: number;
    /** Alert steps taken twice (two reminders of one number, two escalations), or messages of a step sent twice. */
    steps: number;
    /** Status page notices sent to the subscriber under more than one Idempotency-Key. */
    notices: number;
  };
  /** Checks in flight in an agent when it was killed (never acknowledged by JetStream). */
  checksInFlightAtKill: number;
  /** Notification requests repeating a key already received (at-least-once retries a receiver dedupes). */
  redeliveries: number;
  /** Event ids found more than once on EVENTS. */
  republishedEvents: number;
  /** What differs, subject by subject (the first few). */
  details: string[];
}

export interface Observer {
  /** Waits until everything acknowledged up to `until` took effect, and every monitor has a result checked after `since`. */
  caughtUp(until: number, since: number, timeoutMs: number): Promise<void>;
  /** Waits until the pipeline is idle and everything acknowledged took effect; false when it timed out. */
  settled(timeoutMs: number): Promise<{ ok: boolean; why: string }>;
  /** Counts so far (reads EVENTS and check results first). */
  tally(): Promise<Tally>;
  /** Heartbeats whose stored state does not follow from their last acknowledged ping. */
  heartbeatMismatches(): Promise<string[]>;
  /** Record that an agent was killed at `at`, so checks it had in flight are not counted as lost. */
  agentKilled(agentId: string, at: number): void;
  /** An alert owed for a reason the ledger does not show (a heartbeat a test stopped pinging). */
  owe(subject: string, kind: string): void;
  stop(): void;
}

const body = (token: string) => `rel ${token}`;
const alertKinds = new Set(['monitor.down', 'monitor.up', 'heartbeat.down', 'heartbeat.up']);

export function createObserver(dep: Deployment, workload: Workload, ledger: Ledger, traffic: Traffic): Observer {
  const { db } = dep;
  // Pings acknowledged and not yet seen in the ping log, and what was seen (the log keeps only
  // the newest 100 per heartbeat, so pings are confirmed as they land).
  const pendingPings = new Map<string, Acked>();
  const confirmedPings = new Map<string, number>();
  let ledgerSeen = 0;
  const syncLedger = () => {
    for (; ledgerSeen < ledger.acked.length; ledgerSeen++) {
      const a = ledger.acked[ledgerSeen]!;
      if (a.flow === 'ping') pendingPings.set(a.token, a);
    }
  };
  const confirmPings = async () => {
    syncLedger();
    if (pendingPings.size === 0) return;
    const bodies = [...pendingPings.keys()].slice(0, 5_000).map(body);
    const rows = await db<{ body: string; n: number }[]>`
      select body, count(*)::int as n from heartbeat_pings where body = any(${db.array(bodies)}) group by body`;
    for (const r of rows) {
      const token = r.body.slice(4);
      pendingPings.delete(token);
      confirmedPings.set(token, r.n);
    }
  };

  // Notifications at the receiver, by event id and by trigger message.
  const receipts = new Map<string, Receipt>();
  const eventOfMessage = new Map<string, Set<string>>();
  let sinkSeen = 0;
  let redeliveries = 0;
  const seenKeys = new Set<string>();
  // Status page notices at the subscriber's webhook, by the message (the token) of their update.
  const noticeKeys = new Map<string, Set<string>>();
  const syncSink = () => {
    const requests = dep.sink.requests;
    for (; sinkSeen < requests.length; sinkSeen++) {
      const r = requests[sinkSeen]!;
      let n: { id?: string; message?: string; event?: string; incident?: { update?: { message?: string } } };
      try {
        n = JSON.parse(r.body);
      } catch {
        continue;
      }
      const key = String(r.headers['idempotency-key'] ?? '');
      if (seenKeys.has(key)) redeliveries++;
      seenKeys.add(key);
      if (r.url === '/status-subscriber') {
        const message = n.incident?.update?.message ?? '';
        const keys = noticeKeys.get(message) ?? new Set<string>();
        keys.add(key);
        noticeKeys.set(message, keys);
        continue;
      }
      const rec = receipts.get(n.id ?? '') ?? { keys: new Set<string>(), requests: 0 };
      rec.keys.add(key);
      rec.requests++;
      receipts.set(n.id ?? '', rec);
      if (n.event === 'trigger.fired' && n.message) {
        const ids = eventOfMessage.get(n.message) ?? new Set<string>();
        ids.add(n.id ?? '');
        eventOfMessage.set(n.message, ids);
      }
    }
  };

  // EVENTS, read by sequence from where the last read stopped: no consumer is involved.
  const events = new Map<string, StreamEvent>();
  let nextSeq = 1;
  // EVENTS deletes nothing (limits, 30 days): a sequence without a message is read again at the
  // next look and, while it stays empty, reported (an acknowledged event the stream lost).
  const emptySeqs = new Set<number>();
  const readEvents = async () => {
    const jsm = await jetstreamManager(dep.nc);
    const stream = dep.names.streams.events;
    const { state } = await jsm.streams.info(stream);
    if (state.messages === 0) return;
    const found: Omit<StreamEvent, 'copies'>[] = [];
    const read = async (at: number) => {
      const m = await jsm.streams.getMessage(stream, { seq: at }).catch((err: unknown) => {
        if (String(err).includes('no message found')) return null;
        throw err;
      });
      if (!m) {
        emptySeqs.add(at);
        return;
      }
      emptySeqs.delete(at);
      const e = m.json<{
        id: string;
        kind: string;
        subject: { id: string };
        data: { message?: string; alert_id?: string; count?: number };
      }>();
      found.push({ id: e.id, kind: e.kind, subject: e.subject.id, message: e.data.message, alert: e.data.alert_id, count: e.data.count });
    };
    for (const at of [...emptySeqs]) await read(at);
    nextSeq = Math.max(nextSeq, state.first_seq);
    let seq = nextSeq;
    const reader = async () => {
      while (seq <= state.last_seq) await read(seq++);
    };
    await Promise.all(Array.from({ length: 16 }, reader));
    for (const e of found) {
      const known = events.get(e.id);
      if (known) known.copies++;
      else events.set(e.id, { ...e, copies: 1 });
    }
    nextSeq = Math.max(nextSeq, state.last_seq + 1);
  };

  // Check results of the workload's monitors, and the requests each target answered.
  const kills: { agentId: string; at: number }[] = [];
  const owedElsewhere: { subject: string; kind: string }[] = [];
  const monitorIds = workload.monitors.map((m) => m.id);
  type Result = { s: number; c: number; agent: string };
  const readResults = async (): Promise<Map<string, Result[]>> => {
    const rows = await db<{ monitor_id: string; scheduled_at: Date; checked_at: Date; agent_id: string }[]>`
      select monitor_id, scheduled_at, checked_at, agent_id from check_results
      where monitor_id = any(${db.array(monitorIds)}::uuid[]) order by scheduled_at`;
    const out = new Map<string, Result[]>(monitorIds.map((id) => [id, []]));
    for (const r of rows) out.get(r.monitor_id)!.push({ s: r.scheduled_at.getTime(), c: r.checked_at.getTime(), agent: r.agent_id });
    return out;
  };
  /** Requests answered by the targets up to `cutoff`: matched to a stored slot, in flight at a kill, or lost. */
  const matchChecks = (results: Map<string, Result[]>, cutoff: number) => {
    let answered = 0;
    let lost = 0;
    let inFlight = 0;
    for (const m of workload.monitors) {
      const stored = results.get(m.id)!;
      for (const req of m.target.requests) {
        if (req.at > cutoff) continue;
        answered++;
        // The first attempt of a slot starts at its scheduled time, a re-check 1-2 s later.
        if (stored.some((x) => x.s - 200 <= req.at && req.at <= x.c + 3_000)) continue;
        const owner = [...stored].reverse().find((x) => x.s < req.at)?.agent;
        if (kills.some((k) => k.agentId === owner && k.at - 4_000 <= req.at && req.at <= k.at + 500)) inFlight++;
        else lost++;
      }
    }
    return { answered, lost, inFlight };
  };

  // Pings are confirmed in the background while cycles run.
  let stopped = false;
  const poller = (async () => {
    while (!stopped) {
      await confirmPings().catch(() => {});
      await new Promise((r) => setTimeout(r, 250));
    }
  })();

  const triggerDelivered = (a: Acked) => (eventOfMessage.get(body(a.token))?.size ?? 0) > 0;
  const noticeDelivered = (a: Acked) => (noticeKeys.get(body(a.token))?.size ?? 0) > 0;
  const unprocessed = (until: number) => {
    syncLedger();
    syncSink();
    let n = 0;
    for (const a of pendingPings.values()) if (a.ackedAt <= until) n++;
    for (const a of ledger.acked) {
      if (a.flow === 'trigger' && a.ackedAt <= until && !triggerDelivered(a)) n++;
      if (a.flow === 'notice' && a.ackedAt <= until && !noticeDelivered(a)) n++;
    }
    return n;
  };

  const agentsBuffered = async () => {
    let n = 0;
    for (const a of dep.agents) {
      const res = await send('GET', `${a.url}/metrics`, { timeoutMs: 2_000 });
      if (!('status' in res) || res.status !== 200) return Infinity;
      n += Number(/^uptime_agent_results_buffered (\d+)/m.exec(res.body)?.[1] ?? 0);
    }
    return n;
  };

  const pipelineBacklog = async (): Promise<string | undefined> => {
    const jsm = await jetstreamManager(dep.nc);
    const streams = dep.names.streams;
    for (const stream of [streams.pings, streams.results, streams.events]) {
      for await (const c of jsm.consumers.list(stream)) {
        const n = c.num_pending + c.num_ack_pending;
        if (n > 0) return `${n} messages pending on ${stream} (${c.name})`;
      }
    }
    const [outbox] = await db<{ n: number }[]>`select count(*)::int as n from outbox_unpublished`;
    if (outbox!.n > 0) return `${outbox!.n} events not yet published`;
    const [unrouted] = await db<{ n: number }[]>`select count(*)::int as n from outbox_events where notified_at is null`;
    if (unrouted!.n > 0) return `${unrouted!.n} alert events without their deliveries yet`;
    const [deliveries] = await db<{ n: number }[]>`select count(*)::int as n from deliveries where status in ('pending', 'sending')`;
    if (deliveries!.n > 0) return `${deliveries!.n} deliveries not yet sent`;
    const [notices] = await db<{ n: number }[]>`
      select (select count(*) from status_page_notices where fanned_out_at is null)::int
        + (select count(*) from subscriber_deliveries where status in ('pending', 'sending'))::int as n`;
    if (notices!.n > 0) return `${notices!.n} status page notices or their messages not yet sent`;
    const buffered = await agentsBuffered();
    if (buffered > 0) return `${buffered} results buffered in agents`;
    return undefined;
  };

  return {
    async caughtUp(until, since, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      let why = '';
      for (;;) {
        await confirmPings().catch(() => {});
        const n = unprocessed(until);
        if (n > 0) why = `${n} acknowledged pings, trigger calls and incidents not yet processed`;
        else {
          try {
            const rows = await db<{ monitor_id: string }[]>`
              select distinct monitor_id from check_results
              where monitor_id = any(${db.array(monitorIds)}::uuid[]) and checked_at >= ${new Date(since)}`;
            if (rows.length === monitorIds.length) return;
            why = `${monitorIds.length - rows.length} monitors without a result checked after the repair`;
          } catch (err) {
            why = `reading check results: ${(err as Error).message}`;
          }
        }
        if (Date.now() > deadline) throw new Error(`not caught up within ${timeoutMs} ms: ${why}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },

    async settled(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      let idleSince: number | undefined;
      let why = '';
      for (;;) {
        await confirmPings().catch(() => {});
        const n = unprocessed(Infinity);
        let backlog: string | undefined;
        try {
          backlog = n > 0 ? `${n} acknowledged pings, trigger calls and incidents not yet processed` : await pipelineBacklog();
        } catch (err) {
          backlog = `reading the pipeline: ${(err as Error).message}`;
        }
        if (backlog === undefined) {
          idleSince ??= Date.now();
          // Idle twice, half a second apart: nothing was between two stages at the first look.
          if (Date.now() - idleSince >= 500) return { ok: true, why: '' };
        } else {
          idleSince = undefined;
          why = backlog;
        }
        if (Date.now() > deadline) return { ok: false, why };
        await new Promise((r) => setTimeout(r, 250));
      }
    },

    async tally() {
      await confirmPings();
      await readEvents();
      syncSink();
      const results = await readResults();
      const checks = matchChecks(results, Date.now() - 10_000);

      const pings = ledger.acked.filter((a) => a.flow === 'ping');
      const triggers = ledger.acked.filter((a) => a.flow === 'trigger');
      const notices = ledger.acked.filter((a) => a.flow === 'notice');
      const t: Tally = {
        acked: { pings: pings.length, triggers: triggers.length, checks: checks.answered, alerts: 0, steps: 0, notices: notices.length },
        lost: { pings: pendingPings.size, triggers: 0, alerts: 0, notifications: 0, checks: checks.lost, steps: 0, notices: 0 },
        duplicated: { pings: 0, triggers: 0, alerts: 0, notifications: 0, spurious: 0, steps: 0, notices: 0 },
        checksInFlightAtKill: checks.inFlight,
        redeliveries,
        republishedEvents: [...events.values()].filter((e) => e.copies > 1).length,
        details: [],
      };
      for (const n of confirmedPings.values()) if (n > 1) t.duplicated.pings++;
      if (emptySeqs.size > 0)
        t.details.push(
          `EVENTS sequences without a message: ${[...emptySeqs]
            .sort((a, b) => a - b)
            .slice(0, 20)
            .join(', ')}`,
        );

      // Alerts owed: kind changes in each heartbeat's acknowledged sequence (new -> up is silent).
      const owed = new Map<string, number>();
      const bump = (subject: string, kind: string) => owed.set(`${subject} ${kind}`, (owed.get(`${subject} ${kind}`) ?? 0) + 1);
      const last = new Map<string, string>();
      for (const p of pings) {
        const before = last.get(p.subject) ?? pingPattern[0];
        if (before !== p.kind) bump(p.subject, p.kind === 'fail' ? 'heartbeat.down' : 'heartbeat.up');
        last.set(p.subject, p.kind!);
      }
      for (const [id, f] of traffic.flips) {
        for (let i = 0; i < f.downs; i++) bump(id, 'monitor.down');
        for (let i = 0; i < f.ups; i++) bump(id, 'monitor.up');
      }
      for (const o of owedElsewhere) bump(o.subject, o.kind);
      const seen = new Map<string, number>();
      for (const e of events.values()) {
        if (!alertKinds.has(e.kind) && e.kind !== 'heartbeat.late') continue;
        seen.set(`${e.subject} ${e.kind}`, (seen.get(`${e.subject} ${e.kind}`) ?? 0) + 1);
      }
      // What Postgres recorded, to tell an event never raised from one EVENTS does not hold.
      const outbox = new Map<string, { n: number; published: number }>();
      for (const r of await db<{ subject: string; kind: string; n: number; published: number }[]>`
        select o.payload->'subject'->>'id' as subject, o.kind, count(*)::int as n, count(*) filter (where u.id is null)::int as published
        from outbox_events o left join outbox_unpublished u on u.id = o.id
        where o.kind = any(${db.array([...alertKinds])}) group by 1, 2`) {
        outbox.set(`${r.subject} ${r.kind}`, { n: r.n, published: r.published });
      }
      for (const [key, n] of owed) {
        t.acked.alerts += n;
        const got = seen.get(key) ?? 0;
        if (got < n) t.lost.alerts += n - got;
        if (got > n) t.duplicated.alerts += got - n;
        const o = outbox.get(key) ?? { n: 0, published: 0 };
        if (got !== n) t.details.push(`${key}: ${n} owed, ${got} on EVENTS, ${o.n} in the outbox (${o.published} marked published)`);
      }
      for (const [key, got] of seen) {
        if (owed.has(key)) continue;
        t.duplicated.spurious += got;
        t.details.push(`${key}: none owed, ${got} on EVENTS`);
      }

      // Every alert and every trigger.fired on EVENTS is notified once, by Idempotency-Key.
      const notifiable = [...events.values()].filter((e) => alertKinds.has(e.kind) || e.kind === 'trigger.fired');
      const ids = new Set(notifiable.map((e) => e.id));
      for (const e of notifiable) {
        const keys = receipts.get(e.id)?.keys.size ?? 0;
        if (keys === 0) t.lost.notifications++;
        if (keys > 1) t.duplicated.notifications += keys - 1;
      }
      // Messages of alert steps and integration notices are counted below (steps), not here.
      for (const e of events.values()) if (e.kind.startsWith('alert.') || e.kind.startsWith('integration.')) ids.add(e.id);
      for (const [id, r] of receipts) if (!ids.has(id)) t.duplicated.notifications += r.keys.size;

      // Alert steps (ADR 0032): each reminder number and the escalation once per alert on EVENTS,
      // as many as the alert's row recorded, none overdue, and each sent to as many integrations
      // as it has deliveries (an escalated alert's steps go to two), once each.
      const stepEvents = [...events.values()].filter((e) => e.kind === 'alert.renotified' || e.kind === 'alert.escalated');
      const alertRows = await db<{ id: string; renotified: number; escalated: boolean; overdue: boolean }[]>`
        select id, renotified, escalated_at is not null as escalated, coalesce(next_step_at < now() - interval '20 seconds', false) as overdue
        from alerts where project_id = ${dep.projectId}`;
      for (const a of alertRows) {
        const reminders = stepEvents.filter((e) => e.alert === a.id && e.kind === 'alert.renotified');
        const numbers = new Set(reminders.map((e) => e.count));
        const escalations = stepEvents.filter((e) => e.alert === a.id && e.kind === 'alert.escalated').length;
        t.acked.steps += a.renotified + (a.escalated ? 1 : 0);
        const missing = a.renotified - [...numbers].filter((n) => n !== undefined && n >= 1 && n <= a.renotified).length;
        const twice = reminders.length - numbers.size + Math.max(0, escalations - 1);
        const lostHere = missing + (a.escalated && escalations === 0 ? 1 : 0) + (a.overdue ? 1 : 0);
        t.lost.steps += lostHere;
        t.duplicated.steps += twice;
        if (lostHere > 0 || twice > 0)
          t.details.push(
            `alert ${a.id}: ${a.renotified} reminders and ${a.escalated ? 'an' : 'no'} escalation recorded${a.overdue ? ', a step overdue' : ''}; on EVENTS reminders ${[...numbers].join(',')} (${reminders.length} events), ${escalations} escalations`,
          );
      }
      if (stepEvents.length > 0) {
        const expected = new Map(
          (
            await db<{ event_id: string; n: number }[]>`
              select event_id, count(*)::int as n from deliveries where event_id = any(${db.array(stepEvents.map((e) => e.id))}::uuid[])
              group by event_id`
          ).map((r) => [r.event_id, r.n]),
        );
        for (const e of stepEvents) {
          const keys = receipts.get(e.id)?.keys.size ?? 0;
          const want = expected.get(e.id) ?? 0;
          if (keys < want) t.lost.steps += want - keys;
          if (keys > want) t.duplicated.steps += keys - want;
        }
      }

      // Each acknowledged trigger call fired once.
      const firedBy = new Map<string, number>();
      for (const e of events.values())
        if (e.kind === 'trigger.fired' && e.message) firedBy.set(e.message, (firedBy.get(e.message) ?? 0) + 1);
      for (const a of triggers) {
        const n = firedBy.get(body(a.token)) ?? 0;
        if (n === 0) t.lost.triggers++;
        if (n > 1) t.duplicated.triggers += n - 1;
      }

      // Each acknowledged incident reached the page's subscriber under one Idempotency-Key.
      for (const a of notices) {
        const keys = noticeKeys.get(body(a.token))?.size ?? 0;
        if (keys === 0) t.lost.notices++;
        if (keys > 1) t.duplicated.notices += keys - 1;
        if (keys !== 1) t.details.push(`status page incident ${a.token}: its message received under ${keys} keys`);
      }
      return t;
    },

    async heartbeatMismatches() {
      const lastAcked = new Map<string, Acked>();
      for (const a of ledger.acked) if (a.flow === 'ping') lastAcked.set(a.subject, a);
      const rows = await db<{ id: string; status: string; last_ping_kind: string | null; last_ping_at: Date | null }[]>`
        select id, status, last_ping_kind, last_ping_at from heartbeats where id = any(${db.array(workload.heartbeats)}::uuid[])`;
      const logged = await db<{ body: string; received_at: Date }[]>`
        select body, received_at from heartbeat_pings where body = any(${db.array([...lastAcked.values()].map((a) => body(a.token)))})`;
      const receivedAt = new Map(logged.map((r) => [r.body.slice(4), r.received_at.getTime()]));
      const out: string[] = [];
      for (const r of rows) {
        const a = lastAcked.get(r.id);
        if (!a || traffic.stranded.has(r.id)) continue;
        const want = a.kind === 'fail' ? 'down' : 'up';
        const at = receivedAt.get(a.token);
        // last_ping_at is the stream's timestamp of the ping, taken after the edge received it.
        const applied = r.last_ping_at !== null && at !== undefined && r.last_ping_at.getTime() >= at - 50;
        if (r.status !== want || r.last_ping_kind !== a.kind || !applied) {
          out.push(
            `heartbeat ${r.id}: ${r.status}/${r.last_ping_kind} at ${r.last_ping_at?.toISOString()}, last acknowledged ping ${a.kind} received ${at === undefined ? 'never logged' : new Date(at).toISOString()}`,
          );
        }
      }
      return out;
    },

    agentKilled(agentId, at) {
      kills.push({ agentId, at });
    },

    owe(subject, kind) {
      owedElsewhere.push({ subject, kind });
    },

    stop() {
      stopped = true;
      void poller;
    },
  };
}
