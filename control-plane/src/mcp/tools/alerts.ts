import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { SnoozeBody } from '../../alerts/routes.ts';
import { MAX_SNOOZE_MINUTES } from '../../alerts/rules.ts';
import * as alerts from '../../alerts/service.ts';
import { readOnly, toggles, type ToolContext } from '../context.ts';
import { run } from '../result.ts';
import { Paging } from './monitors.ts';

/** The alert tools (ADR 0032): what is open, and acknowledging or snoozing it, as the MCP token's user. */
export function alertTools(server: McpServer, t: ToolContext): void {
  const { ctx, principal } = t;
  const actor = { userId: principal.userId, via: 'mcp' as const };

  server.registerTool(
    'list_alerts',
    {
      title: 'List alerts',
      description:
        'Lists alerts (outages of monitors and heartbeats as people respond to them), open ones first: status open, acknowledged or resolved, who acknowledged or snoozed them, re-notifications sent, escalation. Filter by status (open, unacknowledged, acknowledged, resolved), project_id, monitor_id or heartbeat_id.',
      inputSchema: z
        .object({
          project_id: z.uuid().optional(),
          status: z.enum(['open', 'unacknowledged', 'acknowledged', 'resolved']).optional(),
          monitor_id: z.uuid().optional(),
          heartbeat_id: z.uuid().optional(),
        })
        .extend(Paging),
      annotations: readOnly,
    },
    async (args) =>
      run(async () => {
        const { items, total } = await alerts.listAlerts(ctx, principal, args);
        return { data: items, meta: { current_page: args.page, per_page: args.per_page, total } };
      }),
  );

  server.registerTool(
    'acknowledge_alert',
    {
      title: 'Acknowledge an alert',
      description:
        "Acknowledges an open alert: its re-notifications and escalation stop, and the people who were told hear who took it. Again: no change. A resolved alert can't be.",
      inputSchema: z.object({ id: z.uuid().describe('The alert id (list_alerts).') }),
      annotations: toggles,
    },
    async ({ id }) => run(() => alerts.acknowledgeAlert(ctx, [...principal.projectIds], id, actor)),
  );

  server.registerTool(
    'snooze_alert',
    {
      title: 'Snooze an alert',
      description:
        'Snoozes an open alert for some minutes: no re-notification or escalation until then; still open at the end, it is re-notified at once.',
      inputSchema: z.object({ id: z.uuid().describe('The alert id.') }).extend(SnoozeBody.shape),
      annotations: toggles,
    },
    async ({ id, minutes }) => run(() => alerts.snoozeAlert(ctx, [...principal.projectIds], id, minutes, actor)),
  );

  for (const type of ['monitor', 'heartbeat'] as const) {
    server.registerTool(
      `snooze_${type}`,
      {
        title: `Snooze a ${type}`,
        description: `Snoozes a ${type} for some minutes (null ends its snooze now): checks go on, its alerts are held until then and sent at the end if it is still down; its open alerts wait too.`,
        inputSchema: z.object({
          id: z.uuid().describe(`The ${type} id.`),
          minutes: z
            .number()
            .int()
            .min(1)
            .max(MAX_SNOOZE_MINUTES)
            .nullable()
            .describe(`How long, in minutes (1 to ${MAX_SNOOZE_MINUTES}); null ends the snooze.`),
        }),
        annotations: toggles,
      },
      async ({ id, minutes }) => run(() => alerts.snoozeSubject(ctx, { type, id }, [...principal.projectIds], minutes, actor)),
    );
  }
}
