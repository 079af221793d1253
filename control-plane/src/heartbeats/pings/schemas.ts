import { z } from 'zod';
import { PING_BODY_LIMIT, pingKinds, pingMethods } from '../../../../shared/src/contracts/pings.ts';

export const PingLogEntry = z
  .object({
    kind: z.enum(pingKinds).describe('success (the ping URL or exit code 0), start, or fail (/fail or a non-zero exit code).'),
    exit_code: z.number().int().nullable().describe('The exit code of a `/heartbeat/<id>/<code>` ping, else null.'),
    received_at: z.string().describe('When the ping URL was called, by the clock of the edge that took it.'),
    region: z.string().nullable().describe('Region of the probe agent that took it; null for the control plane.'),
    source: z.string().describe('Address of the caller.'),
    method: z.enum(pingMethods),
    user_agent: z.string().nullable(),
    body: z.string().describe(`The first ${PING_BODY_LIMIT / 1024} KB of the request body (a job's log, for instance).`),
    body_size: z.number().int().describe('Size of the whole request body in bytes.'),
  })
  .meta({ id: 'HeartbeatPing' });
export type PingLogEntry = z.infer<typeof PingLogEntry>;
