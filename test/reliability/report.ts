/**
 * Renders docs/reliability.md from every results file in test/reliability/results/ (an array of
 * rows per test file, see results.ts): `npm run test:reliability` runs it after the suite, so the
 * document is written by the suite. Rows of faults this file does not describe are rendered too,
 * with their notes.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { machineInfo } from '../../bench/lib/machine.ts';
import { resultsDir, type ResultRow } from './results.ts';

const docFile = fileURLToPath(new URL('../../docs/reliability.md', import.meta.url));

/** What each fault of this suite does, by the start of its row name. */
const described: { prefix: string; what: string; from: string }[] = [
  {
    prefix: 'probe agent',
    what: 'SIGKILL to one of the two probe agents of the region (they alternate), then the same command is started again with the same AGENT_ID, as a supervisor restarts a crashed container.',
    from: 'the kill',
  },
  {
    prefix: 'control plane',
    what: 'SIGKILL to one of the two control-plane processes (every role; they alternate), then the same command is started again. Its deadline partitions move after the lease runs out; what it had taken from the streams comes back after the ack wait.',
    from: 'the kill',
  },
  {
    prefix: 'NATS node',
    what: 'SIGKILL to one nats-server of the 3-node cluster (n1, n2, n3 in turn), started again at once on its store; the next cycle waits until every node reports healthy (the rolling-restart rule).',
    from: 'the kill',
  },
  {
    prefix: 'NATS stream leader',
    what: 'SIGKILL to the node leading PINGS (odd cycles) or RESULTS (even cycles); recovery is measured with that node dead, then it is started again.',
    from: 'the kill',
  },
  {
    prefix: 'deadline role: kill',
    what: "The deadline role runs in a process of its own. SIGKILL to it, and it is started again only after the outage (150 s): no process holds its partitions meanwhile, while heartbeats with a one-minute period and grace (a miss 120 s after a ping) are pinged every second. Each cycle one more of them stops pinging 11 s before the kill and misses for real during the outage. The ledger's pings go every 2 s in this suite (a heartbeat's log keeps its newest 100 pings, so one ping a second for 150 s could not all be found in it). Once back, the role replays the backlog: the steady heartbeats owe no alert (any is counted duplicated, as spurious), the silent one owes one heartbeat.down (dated 120 s after its last ping, raised after the role was back) and the heartbeat.up of its next ping.",
    from: 'the restart',
  },
  {
    prefix: 'deadline role: SIGSTOP',
    what: 'The same, with the deadline process frozen (SIGSTOP) for the outage instead of killed: its leases lapse with no other holder, and when it wakes (SIGCONT) it must drop the partitions it no longer holds before taking them again and replaying.',
    from: 'SIGCONT',
  },
  {
    prefix: 'Postgres',
    what: "The suite's own Postgres (the embedded one the product ships, on a port of its own) is stopped (fast shutdown: every connection is cut) for 30 s and started again. Meanwhile the API is asked every second and must answer 503 with a JSON message within 3 s; the regional ping edges keep accepting pings.",
    from: 'Postgres being back',
  },
];

const ms = (v: number) => (v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`);
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function version(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', timeout: 5_000 }).trim().split('\n')[0]!;
  } catch {
    return 'unknown';
  }
}

interface Loaded {
  file: string;
  at: Date;
  rows: ResultRow[];
}

function load(): Loaded[] {
  if (!existsSync(resultsDir)) return [];
  return readdirSync(resultsDir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const path = join(resultsDir, f);
      const rows = JSON.parse(readFileSync(path, 'utf8')) as ResultRow[];
      if (!Array.isArray(rows)) throw new Error(`${f}: expected an array of rows`);
      return { file: f, at: statSync(path).mtime, rows };
    });
}

export function render(files: Loaded[], now = new Date()): string {
  const m = machineInfo();
  const rows = files.flatMap((f) => f.rows.map((r) => ({ ...r, file: f.file })));
  const about = (fault: string) => described.find((d) => fault.startsWith(d.prefix));
  const lines = [
    '# Reliability under faults',
    '',
    '<!-- Written by `npm run test:reliability` (test/reliability/report.ts) from test/reliability/results/*.json: do not edit by hand. -->',
    '',
    `Measured ${now.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${m.cpus} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}, ` +
      `${version('nats-server', ['--version'])}; load average ${m.loadAtStart} when the report was written. ` +
      'The figures come from one run on a shared machine: read recovery times as orders of magnitude.',
    '',
    '## How it is measured',
    '',
    'The product runs as it is deployed: two control-plane processes (every role) and two probe agents of one region, each started through the CLI (`uptime control-plane`, `uptime probe-agent --region`), on real Postgres and real nats-server processes, all on loopback. The account and its token are made with `uptime user create` and `uptime token create`. Third parties are local servers: the monitored sites, and a webhook receiver standing for the alert integration. For the deadline-role faults the deadline role runs in a process of its own (`uptime control-plane --roles deadline`) and the two control planes run the other roles.',
    '',
    'While faults are injected, clients send steady traffic and keep a ledger of every request the service acknowledged:',
    '',
    "- heartbeat pings (12 heartbeats, one ping a second each) through every ping URL in turn (the control planes' and the agents' regional edges), each with a unique body; a 200 is an acknowledgement. Each heartbeat follows a pattern of four success pings and two /fail pings, so it goes down and up again; the pattern moves on only after an acknowledged ping, and a refused ping is sent again (as a new request, to the next URL);",
    '- notification trigger calls (2.5 a second) with a unique message; a 202 is an acknowledgement;',
    '- HTTP monitors (4, checked every 5 s by the agents) against local sites; two of them are switched to 503 and back, each switch waiting until the service has shown it, and every request a site answered is a check the service owes;',
    "- the project's response policy (ADR 0032): a reminder every minute for an unacknowledged alert and an escalation after two minutes, to a second integration on the same receiver; six heartbeats fail once at the start and are never pinged again, so their alerts are reminded and escalated all through the run, faults included;",
    "- status page incidents published through the API (one every 2 s, to either control plane) with a unique message; a 201 is an acknowledgement, and each owes one message to the page's webhook subscriber (ADR 0042), on the same receiver.",
    '',
    'A cycle: traffic starts; the fault is injected (and repaired: a restart); traffic continues until every heartbeat and the trigger have a request acknowledged after the repair; then the suite waits until everything acknowledged so far has taken effect. **Recovery** is the time from the fault (for the Postgres outage, from Postgres being back) to that point. Traffic then stops, the pipeline is left to settle (every durable consumer drained, no unpublished outbox event, no pending delivery, nothing buffered in an agent) and everything is counted:',
    '',
    "- **lost**: acknowledged pings missing from the ping log (read from Postgres as they land); heartbeats whose stored state is not the one their last acknowledged ping makes; acknowledged trigger calls without their `trigger.fired` event; alerts owed (each change of kind in a heartbeat's acknowledged pings, each switch of a site) without their `heartbeat.down`/`up` or `monitor.down`/`up` event on EVENTS (read by sequence, distinct by event id); events without a notification at the webhook receiver; checks a site answered without a stored result; alert steps (a reminder's number, an escalation) recorded on an alert without their `alert.renotified` / `alert.escalated` event on EVENTS, a step overdue by more than 20 s, or a step's message missing at one of its integrations; acknowledged status page incidents without their message at the subscriber's webhook. Checks that were in flight inside an agent at the moment it was killed were never acknowledged by JetStream: they are reported in the notes, not counted;",
    '- **duplicated**: a ping logged twice, a trigger call fired twice, more events than the transitions owe (or alerts nothing owed), an event notified under more than one Idempotency-Key, a reminder number or an escalation on EVENTS twice for one alert, or the message of a step sent to more integrations than it has deliveries, or a status page incident’s message received under more than one Idempotency-Key. A notification re-sent under the same key (at-least-once delivery, which a receiver deduplicates by that key) is reported in the notes.',
    '',
    'Every cycle also checks that no process of the product exited on its own. The suite asserts lost = 0 and duplicated = 0 for every fault; recovery times only have a sanity bound (3 minutes).',
    '',
    '## Faults',
    '',
    '| fault | what is done | recovery from |',
    '|---|---|---|',
    ...[...new Set(rows.map((r) => r.fault))].map((f) => {
      const d = about(f);
      return `| ${cell(f)} | ${cell(d?.what ?? 'See the notes of its row.')} | ${d?.from ?? 'the fault'} |`;
    }),
    '',
    '## What faults found, and what guards it now',
    '',
    "- **A false alert storm after the deadline role was away.** Tried from outside: with the roles in separate processes, a heartbeat pinged every second, the deadline process killed and started again 130 to 150 s later sent 22 to 48 `heartbeat.down` and as many `heartbeat.up` for a heartbeat that never missed. Each replayed ping armed a deadline already past by the clock, which fired before the next replayed ping was applied. Now a partition whose pings have not all reached the process judges its deadlines by the stream timestamp of the newest ping delivered, never by the clock (`control-plane/src/heartbeats/deadline/partition-clock.ts`), and a heartbeat's queued pings are applied together, each judged at its own instant (`control-plane/src/heartbeats/sequence.ts`); ADR 0021. Guarded by the two deadline-role faults above and by `test/heartbeats/backlog.test.ts` (both failed before: false alerts on replay).",
    '- **One flooded heartbeat held back its partition.** A job pinging its URL 6,000 times a second left 270,000 pings queued, applied one at a time at about 170 a second, and other heartbeats of the partition were declared down meanwhile. Now one step applies every queued ping of a heartbeat (the ping log keeps its newest 100), a batch stops at a ping budget so others come next, a partition being replayed cannot raise misses its queued pings answer, and each ping edge answers `429 Too many pings` beyond `PING_RATE_LIMIT` per heartbeat. Measured by the `apply` part of `npm run bench`; tested by `test/heartbeats/backlog.test.ts` and `test/heartbeats/actors.test.ts`.',
    '',
    '## Results',
    '',
    '| fault | cycles | recovery p50 | recovery max | lost | duplicated | notes |',
    '|---|---:|---:|---:|---:|---:|---|',
    ...rows.map(
      (r) =>
        `| ${cell(r.fault)} | ${r.cycles} | ${ms(r.recovery_ms.p50)} | ${ms(r.recovery_ms.max)} | ${r.lost} | ${r.duplicated} | ${cell(r.notes ?? '')} |`,
    ),
    '',
    `Totals: ${rows.reduce((n, r) => n + r.cycles, 0)} cycles, ${rows.reduce((n, r) => n + r.lost, 0)} lost, ${rows.reduce((n, r) => n + r.duplicated, 0)} duplicated.`,
    '',
    'Results files:',
    '',
    ...files.map((f) => `- \`test/reliability/results/${f.file}\`, written ${f.at.toISOString().slice(0, 16).replace('T', ' ')} UTC`),
    '',
  ];
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const files = load();
  if (files.length === 0) {
    process.stderr.write(`no results in ${resultsDir}: run the reliability suite first\n`);
    process.exit(1);
  }
  writeFileSync(docFile, render(files));
  process.stderr.write(`wrote ${docFile} from ${files.length} results file(s)\n`);
}
