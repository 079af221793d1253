import type { JsMsg } from '@nats-io/jetstream';
import type { z } from 'zod';
import type { Logger } from '../../../../shared/src/logger.ts';

/** How a consumer tells its messages from what it terminates. */
export interface MessageCheck<T> {
  /** The message's schema (shared/src/contracts/). */
  schema: z.ZodType<T>;
  /** A check beyond the schema: a value the role could never handle (one its store cannot hold). */
  accept?(value: T): boolean;
  /** What a message is, in logs: 'result', 'ping'. */
  noun: string;
}

/**
 * The message's value, or undefined once the message has been terminated, logged and counted. A
 * message that is not what its stream promises would fail the same way on every redelivery: it
 * is never retried, and never stops the consumer.
 */
export function parseOrTerminate<T>(
  msg: JsMsg,
  check: MessageCheck<T>,
  opts: { log: Logger; terminate(msg: JsMsg): void; counted(): void },
): T | undefined {
  let parsed: z.ZodSafeParseResult<T> | undefined;
  try {
    parsed = check.schema.safeParse(msg.json());
  } catch {
    parsed = undefined;
  }
  if (parsed?.success && (!check.accept || check.accept(parsed.data))) return parsed.data;
  opts.counted();
  opts.log.warn({ subject: msg.subject, seq: msg.seq, issues: parsed?.error?.issues.slice(0, 3) }, `invalid ${check.noun} terminated`);
  opts.terminate(msg);
  return undefined;
}
