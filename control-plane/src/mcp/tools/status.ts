import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { requireProject } from '../../accounts/bearer.ts';
import * as heartbeats from '../../heartbeats/service.ts';
import { MAX_PER_PAGE } from '../../platform/http/pagination.ts';
import { ProjectUpdateBody } from '../../projects/schemas.ts';
import * as projects from '../../projects/service.ts';
import { projectOpenIncidents } from '../../monitors/history.ts';
import { monitorStatuses } from '../../monitors/schemas.ts';
import * as monitors from '../../monitors/service.ts';
import { overwrites, readOnly, type ToolContext } from '../context.ts';
import { run } from '../result.ts';

const statusNames: Record<number, string> = { 0: 'pending', 1: 'up', 2: 'down', 3: 'paused', 4: 'degraded' };

async function all<T>(load: (page: number) => Promise<{ items: T[]; total: number }>): Promise<T[]> {
  const items: T[] = [];
  for (let page = 1; ; page++) {
    const got = await load(page);
    items.push(...got.items);
    if (items.length >= got.total || got.items.length === 0) return items;
  }
}

export function statusTools(server: McpServer, t: ToolContext): void {
  const { ctx, principal } = t;

  server.registerTool(
    'list_projects',
    {
      title: 'List projects',
      description: 'The projects you can see (id, name, organization), for the project_id of other tools.',
      inputSchema: z.object({}),
      annotations: readOnly,
    },
    async () => run(async () => all((page) => projects.listProjects(ctx.sql, principal, undefined, { page, per_page: MAX_PER_PAGE }))),
  );

  server.registerTool(
    'update_project',
    {
      title: 'Update a project',
      description:
        "Changes a project's name, description or alert grouping (alert_group_seconds: the project's monitor alerts within this many seconds of the first go out as one message per integration; null turns grouping off). Same fields as PUT /projects/{id}.",
      inputSchema: z.object({ id: z.uuid().describe('The project id.'), changes: ProjectUpdateBody }),
      annotations: overwrites,
    },
    async ({ id, changes }) => run(() => projects.updateProject(ctx.sql, principal, id, changes)),
  );

  server.registerTool(
    'project_status',
    {
      title: 'Status summary of a project',
      description:
        'What is up and what is down in a project: monitor and heartbeat counts by status, the ones needing attention, and ongoing incidents.',
      inputSchema: z.object({ project_id: z.uuid() }),
      annotations: readOnly,
    },
    async ({ project_id }) =>
      run(async () => {
        requireProject(principal, project_id);
        const page = (p: number) => ({ page: p, per_page: MAX_PER_PAGE });
        const [ms, hs] = await Promise.all([
          all((p) => monitors.listMonitors(ctx, principal, project_id, page(p))),
          all((p) => heartbeats.listHeartbeats(ctx, principal, project_id, page(p))),
        ]);
        const count = <T>(items: T[], key: (i: T) => string) =>
          items.reduce<Record<string, number>>((acc, i) => ({ ...acc, [key(i)]: (acc[key(i)] ?? 0) + 1 }), {});
        const down = ms.filter((m) => m.status === monitorStatuses.down);
        // Oldest first: the one that has lasted longest leads.
        const incidents = (await projectOpenIncidents(ctx, principal, project_id)).reverse();
        return {
          project_id,
          overall:
            down.length > 0 || hs.some((h) => h.status === 'down')
              ? 'down'
              : hs.some((h) => h.status === 'late')
                ? 'degraded'
                : 'operational',
          monitors: { total: ms.length, by_status: count(ms, (m) => statusNames[m.status] ?? String(m.status)) },
          heartbeats: { total: hs.length, by_status: count(hs, (h) => h.status) },
          attention: [
            ...down.map((m) => ({ type: 'monitor', id: m.id, name: m.name, status: 'down', url: m.url })),
            ...hs
              .filter((h) => h.status === 'down' || h.status === 'late')
              .map((h) => ({ type: 'heartbeat', id: h.id, name: h.name, status: h.status, last_ping_at: h.last_ping_at })),
          ],
          open_incidents: incidents.map((i) => ({
            monitor_id: i.monitor_id,
            monitor_name: ms.find((m) => m.id === i.monitor_id)?.name ?? '',
            started_at: i.started_at,
            cause: i.cause,
            regions: i.regions,
          })),
        };
      }),
  );
}
