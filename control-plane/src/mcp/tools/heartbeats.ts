import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { HeartbeatCreateBody, HeartbeatListQuery, HeartbeatUpdateBody } from '../../heartbeats/schemas.ts';
import * as heartbeats from '../../heartbeats/service.ts';
import { creates, overwrites, readOnly, type ToolContext } from '../context.ts';
import { run } from '../result.ts';
import { Paging } from './monitors.ts';

export function heartbeatTools(server: McpServer, t: ToolContext): void {
  const { ctx, principal } = t;

  server.registerTool(
    'list_heartbeats',
    {
      title: 'List heartbeats',
      description:
        'Lists heartbeats (cron job watchers) of one project, or of all your projects, with status (new, up, late, down, running, paused), last ping and next expected ping.',
      inputSchema: HeartbeatListQuery.extend(Paging),
      annotations: readOnly,
    },
    async (args) =>
      run(async () => {
        const { items, total } = await heartbeats.listHeartbeats(ctx, principal, args.project_id, args);
        return { data: items, meta: { current_page: args.page, per_page: args.per_page, total } };
      }),
  );

  server.registerTool(
    'get_heartbeat',
    {
      title: 'Get a heartbeat',
      description: 'One heartbeat with its schedule, status and its three ping URLs (success, /start, /fail).',
      inputSchema: z.object({ id: z.uuid().describe('The heartbeat id.') }),
      annotations: readOnly,
    },
    async ({ id }) => run(() => heartbeats.getHeartbeat(ctx, principal, id)),
  );

  server.registerTool(
    'create_heartbeat',
    {
      title: 'Create a heartbeat',
      description: 'Creates a heartbeat in a project (same fields as POST /heartbeats). The answer holds the ping URL the job must call.',
      inputSchema: HeartbeatCreateBody,
      annotations: creates,
    },
    async (body) => run(() => heartbeats.createHeartbeat(ctx, principal, body)),
  );

  server.registerTool(
    'update_heartbeat',
    {
      title: 'Update a heartbeat',
      description:
        'Changes a heartbeat (same fields as PATCH /heartbeats/{id}: only those given change), such as its schedule, grace, integrations or the monitors and heartbeats it depends on (depends_on).',
      inputSchema: z.object({ id: z.uuid().describe('The heartbeat id.'), changes: HeartbeatUpdateBody }),
      annotations: overwrites,
    },
    async ({ id, changes }) => run(() => heartbeats.updateHeartbeat(ctx, principal, id, changes)),
  );
}
