import { z } from 'zod';
import { AssertionOutcome, CheckDetails } from './checks.ts';
import { Assignment, CheckResult } from './monitoring.ts';

/**
 * "Test now" (ADR 0034): the control plane asks one agent of a region (core NATS request/reply on
 * `<ns>.checks.test[.<region>]`) to run a monitor's check once, as the monitor is or as a form
 * holds it before saving. The check is the one the agent runs on schedule, without the re-check
 * of a failure: the reply is what one attempt saw. Nothing is stored or published.
 */
export const CheckTestRequest = z.object({
  /** The monitor as an agent gets it (settings and password sealed), with any id for an unsaved one. */
  assignment: Assignment,
});
export type CheckTestRequest = z.infer<typeof CheckTestRequest>;

export const CheckTestReply = z.object({
  region: z.string(),
  agent_id: z.string(),
  checked_at: z.iso.datetime(),
  ok: z.boolean(),
  degraded: z.boolean(),
  status_code: CheckResult.shape.status_code,
  timings: CheckResult.shape.timings,
  error: CheckResult.shape.error,
  assertions: z.array(AssertionOutcome),
  details: CheckDetails.nullable(),
});
export type CheckTestReply = z.infer<typeof CheckTestReply>;
