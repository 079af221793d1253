import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { fireTrigger } from '../../triggers/fire.ts';
import { MAX_MESSAGE, TriggerListQuery } from '../../triggers/schemas.ts';
import * as triggers from '../../triggers/service.ts';
import { readOnly, type ToolContext } from '../context.ts';
import { run } from '../result.ts';
import { Paging } from './monitors.ts';

export function triggerTools(server: McpServer, t: ToolContext): void {
  const { ctx, principal } = t;

  server.registerTool(
    'list_triggers',
    {
      title: 'List notification triggers',
      description: 'Triggers of one project, or of all your projects: name, notify URL, protection, rate limit, calls so far.',
      inputSchema: TriggerListQuery.extend(Paging),
      annotations: readOnly,
    },
    async (args) =>
      run(async () => {
        const { items, total } = await triggers.listTriggers(ctx, principal, args.project_id, args);
        return { data: items, meta: { current_page: args.page, per_page: args.per_page, total } };
      }),
  );

  server.registerTool(
    'fire_trigger',
    {
      title: 'Fire a notification trigger',
      description:
        'Sends a message through the active integrations linked to a trigger, exactly as a call of its notify URL would (counted, rate-limited, recorded). ' +
        "Without a message the trigger's default message is sent. A token-protected trigger needs its token.",
      inputSchema: z.object({
        id: z.uuid().describe('The trigger id.'),
        message: z.string().min(1).max(MAX_MESSAGE).optional(),
        token: z.string().max(256).optional().describe("The trigger's token, when it is protected."),
      }),
      // It reaches outside: Slack, email, webhooks.
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async ({ id, message, token }) =>
      run(async () => {
        await triggers.getTrigger(ctx, principal, id);
        return fireTrigger(
          { sql: ctx.sql, log: ctx.log, outbox: ctx.outbox },
          { triggerId: id, message, tokens: token ? [token] : [], sourceAddress: null, userAgent: 'mcp' },
        );
      }),
  );
}
