import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { StatusPageCreateBody, StatusPageListQuery, StatusPageUpdateBody } from '../../status-pages/schemas.ts';
import * as statusPages from '../../status-pages/service.ts';
import { creates, overwrites, readOnly, type ToolContext } from '../context.ts';
import { run } from '../result.ts';
import { Paging } from './monitors.ts';

export function statusPageTools(server: McpServer, t: ToolContext): void {
  const { ctx, principal } = t;

  server.registerTool(
    'list_status_pages',
    {
      title: 'List status pages',
      description:
        "Lists public status pages of one project, or of all your projects: title, public url, groups of components (monitors and heartbeats with their status) and the page's banner (overall.level: operational, maintenance, degraded, partial_outage, major_outage).",
      inputSchema: StatusPageListQuery.extend(Paging),
      annotations: readOnly,
    },
    async (args) =>
      run(async () => {
        const { items, total } = await statusPages.listStatusPages(ctx, principal, args.project_id, args);
        return { data: items, meta: { current_page: args.page, per_page: args.per_page, total } };
      }),
  );

  server.registerTool(
    'get_status_page',
    {
      title: 'Get a status page',
      description: "A status page with its groups, each component's status and whether maintenance covers it now, and the page's banner.",
      inputSchema: z.object({ id: z.uuid().describe('The status page id.') }),
      annotations: readOnly,
    },
    async ({ id }) => run(() => statusPages.getStatusPage(ctx, principal, id)),
  );

  server.registerTool(
    'create_status_page',
    {
      title: 'Create a status page',
      description:
        'Creates a public status page (same fields as POST /status-pages): title, description, and groups [{ name, components: [{ type: monitor|heartbeat, id, display_name?, description? }] }] of the same project. No groups: it shows every monitor and heartbeat of the project. It is public at once at its url.',
      inputSchema: StatusPageCreateBody,
      annotations: creates,
    },
    async (body) => run(() => statusPages.createStatusPage(ctx, principal, body)),
  );

  server.registerTool(
    'update_status_page',
    {
      title: 'Update a status page',
      description:
        'Changes the fields given of a status page (same fields as PATCH /status-pages/{id}); groups, when given, replace every group.',
      inputSchema: z.object({ id: z.uuid().describe('The status page id.'), changes: StatusPageUpdateBody }),
      annotations: overwrites,
    },
    async ({ id, changes }) => run(() => statusPages.updateStatusPage(ctx, principal, id, changes)),
  );

  server.registerTool(
    'delete_status_page',
    {
      title: 'Delete a status page',
      description: 'Deletes a status page; its public address stops working.',
      inputSchema: z.object({ id: z.uuid().describe('The status page id.') }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ id }) =>
      run(async () => {
        await statusPages.deleteStatusPage(ctx, principal, id);
        return { deleted: id };
      }),
  );
}
