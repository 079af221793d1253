import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { ensureBadge, getBadge, removeBadge } from '../../status-pages/badge-resource.ts';
import type { BadgeSubject } from '../../status-pages/badges-repo.ts';
import { creates, overwrites, readOnly, type ToolContext } from '../context.ts';
import { run } from '../result.ts';

const Subject = z.object({
  type: z.enum(['monitor', 'heartbeat']),
  id: z.uuid().describe('The monitor or heartbeat id.'),
});

const subjectOf = (s: z.infer<typeof Subject>): BadgeSubject => (s.type === 'monitor' ? { monitorId: s.id } : { heartbeatId: s.id });

export function badgeTools(server: McpServer, t: ToolContext): void {
  const { ctx, principal } = t;

  server.registerTool(
    'get_badge',
    {
      title: 'Get the public badge of a monitor or heartbeat',
      description:
        'The public badge of a monitor or heartbeat (as GET /monitors/{id}/badge): its secret slug and the URLs of its status, uptime and (monitors) response time badges, each as SVG and Shields endpoint JSON. Not found when it has none.',
      inputSchema: Subject,
      annotations: readOnly,
    },
    async (args) => run(() => getBadge(ctx, principal, subjectOf(args))),
  );

  server.registerTool(
    'create_badge',
    {
      title: 'Create the public badge of a monitor or heartbeat',
      description:
        'Gives a monitor or heartbeat public badges at a new secret address, for a README or a wiki (anyone with the address sees its name and figures); when it has them already, returns those.',
      inputSchema: Subject,
      annotations: creates,
    },
    async (args) => run(async () => (await ensureBadge(ctx, principal, subjectOf(args))).badge),
  );

  server.registerTool(
    'delete_badge',
    {
      title: 'Remove the public badge of a monitor or heartbeat',
      description: 'Removes the public badges of a monitor or heartbeat: their addresses stop working.',
      inputSchema: Subject,
      annotations: overwrites,
    },
    async (args) =>
      run(async () => {
        await removeBadge(ctx, principal, subjectOf(args));
        return { message: 'Badge removed successfully' };
      }),
  );
}
