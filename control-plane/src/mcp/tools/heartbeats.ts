import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { HeartbeatCreateBody, HeartbeatListQuery, HeartbeatUpdateBody } from '../../heartbeats/schemas.ts';
import * as heartbeats from '../../heartbeats/service.ts';
import * as pingLog from '../../heartbeats/pings/service.ts';
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
    'list_heartbeat_pings',
    {
      title: "List a heartbeat's pings",
      description:
        'The pings a heartbeat received, newest first (the last 100 are kept), as GET /heartbeats/{id}/pings: kind, time, run id, how the rules judged it (outcome, reason: failed, output, too_short, too_frequent), run duration, exit code, the output it posted, source address and user agent.',
      inputSchema: z.object({ id: z.uuid().describe('The heartbeat id.'), ...Paging }),
      annotations: readOnly,
    },
    async ({ id, ...page }) =>
      run(async () => {
        const { items, total } = await pingLog.listPings(ctx, principal, id, page);
        return { data: items, meta: { current_page: page.page, per_page: page.per_page, total } };
      }),
  );

  server.registerTool(
    'create_heartbeat',
    {
      title: 'Create a heartbeat',
      description:
        'Creates a heartbeat in a project (same fields as POST /heartbeats, run rules included: max_duration, min_duration, too_frequent_ratio, alert_after_failures, success_exit_codes, output_rules). The answer holds the ping URL the job must call.',
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
