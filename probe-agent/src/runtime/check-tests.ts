import type { Msg } from '@nats-io/transport-node';
import { CheckTestRequest, type CheckTestReply } from '../../../shared/src/contracts/check-test.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import type { NatsConnection } from '../../../shared/src/nats.ts';
import type { Names } from '../../../shared/src/subjects.ts';
import type { ProbeRunner } from '../check/types/run.ts';

/** Tests running at once on one agent at most; beyond it an agent declines (the dashboard says busy). */
const MAX_RUNNING = 16;

export type CheckTests = { stop(): void };

/**
 * Answers "test now" requests (ADR 0034): one check of the monitor sent, as the agent runs it on
 * schedule but without the re-check of a failure, and its outcome as the reply. One agent of the
 * region answers (a queue group); requests naming no region go to any agent.
 */
export function answerCheckTests(opts: {
  nc: NatsConnection;
  names: Names;
  region: string;
  agentId: string;
  probe: ProbeRunner;
  log: Logger;
}): CheckTests {
  let running = 0;
  const controller = new AbortController();

  async function answer(msg: Msg): Promise<void> {
    if (!msg.reply) return;
    let request: CheckTestRequest;
    try {
      request = CheckTestRequest.parse(msg.json());
    } catch {
      msg.respond(JSON.stringify({ error: 'not a check test request' }));
      return;
    }
    if (running >= MAX_RUNNING) {
      msg.respond(JSON.stringify({ error: 'busy' }));
      return;
    }
    running++;
    try {
      const checkedAt = new Date().toISOString();
      const outcome = await opts.probe(request.assignment, controller.signal);
      const reply: CheckTestReply = {
        region: opts.region,
        agent_id: opts.agentId,
        checked_at: checkedAt,
        ok: outcome.ok,
        degraded: outcome.degraded,
        status_code: outcome.status_code,
        timings: outcome.timings,
        error: outcome.error,
        assertions: outcome.assertions ?? [],
        details: outcome.details ?? null,
      };
      msg.respond(JSON.stringify(reply));
    } finally {
      running--;
    }
  }

  const queue = `${opts.names.namespace}-check-tests-${opts.region}`;
  const handle = (err: Error | null, msg: Msg) => {
    if (err) return;
    answer(msg).catch((e: unknown) => opts.log.warn({ err: e }, 'check test failed'));
  };
  const subs = [
    opts.nc.subscribe(opts.names.subjects.checkTest(opts.region), { queue, callback: handle }),
    opts.nc.subscribe(opts.names.subjects.checkTest(), { queue: `${opts.names.namespace}-check-tests`, callback: handle }),
  ];
  return {
    stop() {
      controller.abort();
      for (const s of subs) s.unsubscribe();
    },
  };
}
