import type { Principal } from '../accounts/bearer.ts';
import type { HeartbeatContext } from '../heartbeats/service.ts';
import type { Channels } from '../notifications/channels/index.ts';

/** What a tool runs with: the API's context and the MCP token's principal (same tenancy as REST). */
export interface ToolContext {
  ctx: HeartbeatContext;
  principal: Principal;
  /** The integration channels, for previews (one set per process, not per request). */
  channels: Channels;
}

export const readOnly = { readOnlyHint: true, openWorldHint: false } as const;
export const creates = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const;
export const toggles = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
export const overwrites = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false } as const;
