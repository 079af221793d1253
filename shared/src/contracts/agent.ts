import { z } from 'zod';

/** Value of KV `agents` key `<region>.<agent_id>`, refreshed every few seconds while alive. */
export const AgentPresence = z.object({
  agent_id: z.string(),
  region: z.string(),
  version: z.string(),
  hostname: z.string(),
  started_at: z.iso.datetime(),
  seen_at: z.iso.datetime(),
  /**
   * The agent's canaries (CANARY_URLS): addresses that answer whenever this agent's network
   * works. Left out by an agent without canaries, or before its first round of them.
   */
  canaries: z
    .object({
      total: z.number().int().min(1),
      failing: z.number().int().min(0),
      checked_at: z.iso.datetime(),
    })
    .optional(),
  /**
   * The monitor types this agent runs (http, tcp, dns...). Absent: http only, as an agent made
   * before monitor types announces itself; the assigner gives a region a monitor of another type
   * only once every live agent of the region runs it.
   */
  check_types: z.array(z.string().max(32)).max(64).optional(),
});
export type AgentPresence = z.infer<typeof AgentPresence>;
