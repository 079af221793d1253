import { z } from 'zod';

/** Value of KV `agents` key `<region>.<agent_id>`, refreshed every few seconds while alive. */
export const AgentPresence = z.object({
  agent_id: z.string(),
  region: z.string(),
  version: z.string(),
  hostname: z.string(),
  started_at: z.iso.datetime(),
  seen_at: z.iso.datetime(),
});
export type AgentPresence = z.infer<typeof AgentPresence>;
