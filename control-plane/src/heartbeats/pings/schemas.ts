import { z } from 'zod';
import { PING_BODY_LIMIT, pingKinds, pingMethods } from '../../../../shared/src/contracts/pings.ts';
import { failureReasons } from '../state.ts';

export const PingLogEntry = z
  .object({
    kind: z.enum(pingKinds).describe('success (the ping URL or exit code 0), start, or fail (/fail or a non-zero exit code).'),
    exit_code: z.number().int().nullable().describe('The exit code of a `/heartbeat/<id>/<code>` ping, else null.'),
    received_at: z.string().describe('When the ping URL was called, by the clock of the edge that took it.'),
    region: z.string().nullable().describe('Region of the probe agent that took it; null for the control plane.'),
    source: z.string().describe('Address of the caller.'),
    method: z.enum(pingMethods),
    user_agent: z.string().nullable(),
    body: z
      .string()
      .describe(
        `The first PING_BODY_LIMIT bytes (${PING_BODY_LIMIT / 1024} KB by default) of the request body: the job's output, for instance.`,
      ),
    body_size: z.number().int().describe('Size of the whole request body in bytes.'),
    rid: z.string().nullable().describe('The run id the ping carried (`?rid=`), else null.'),
    outcome: z
      .enum(['success', 'fail'])
      .nullable()
      .describe('How the rules judged a completion (after exit codes, output rules, too short and too frequent); null for a /start.'),
    reason: z
      .enum(failureReasons)
      .nullable()
      .describe('Why a completion counts as failed: failed (/fail or an exit code), output, too_short, too_frequent; else null.'),
    duration_seconds: z
      .number()
      .nullable()
      .describe('For a completion that closed a run: seconds since its /start (milliseconds kept), with no upper cap; else null.'),
  })
  .meta({ id: 'HeartbeatPing' });
export type PingLogEntry = z.infer<typeof PingLogEntry>;
