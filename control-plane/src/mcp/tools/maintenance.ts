import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { MaintenanceWindowCreateBody, MaintenanceWindowListQuery, MaintenanceWindowUpdateBody } from '../../maintenance/schemas.ts';
import * as maintenance from '../../maintenance/service.ts';
import { creates, overwrites, readOnly, type ToolContext } from '../context.ts';
import { run } from '../result.ts';
import { Paging } from './monitors.ts';

export function maintenanceTools(server: McpServer, t: ToolContext): void {
  const { ctx, principal } = t;

  server.registerTool(
    'list_maintenance_windows',
    {
      title: 'List maintenance windows',
      description:
        'Lists maintenance windows (one-off or recurring) of one project, or of all your projects, with whether each is in progress and its current or next run. During a window alerts of what it covers are held and its time is left out of uptime.',
      inputSchema: MaintenanceWindowListQuery.extend(Paging),
      annotations: readOnly,
    },
    async (args) =>
      run(async () => {
        const { items, total } = await maintenance.listWindows(ctx, principal, args.project_id, args);
        return { data: items, meta: { current_page: args.page, per_page: args.per_page, total } };
      }),
  );

  server.registerTool(
    'create_maintenance_window',
    {
      title: 'Create a maintenance window',
      description:
        'Creates a maintenance window (same fields as POST /maintenance-windows): one-off with starts_at and ends_at (ISO 8601), or recurring with cron, duration_seconds and timezone; covering monitor_ids and/or heartbeat_ids of the project, or whole_project.',
      inputSchema: MaintenanceWindowCreateBody,
      annotations: creates,
    },
    async (body) => run(() => maintenance.createWindow(ctx, principal, body)),
  );

  server.registerTool(
    'update_maintenance_window',
    {
      title: 'Update a maintenance window',
      description:
        'Changes the fields given of a maintenance window (same fields as PATCH /maintenance-windows/{id}); active: false pauses it.',
      inputSchema: z.object({ id: z.uuid().describe('The window id.'), changes: MaintenanceWindowUpdateBody }),
      annotations: overwrites,
    },
    async ({ id, changes }) => run(() => maintenance.updateWindow(ctx, principal, id, changes)),
  );

  server.registerTool(
    'delete_maintenance_window',
    {
      title: 'Delete a maintenance window',
      description: 'Deletes a maintenance window; one in progress ends now.',
      inputSchema: z.object({ id: z.uuid().describe('The window id.') }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ id }) =>
      run(async () => {
        await maintenance.deleteWindow(ctx, principal, id);
        return { deleted: id };
      }),
  );
}
