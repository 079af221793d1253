import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { MAX_PER_PAGE } from '../../platform/http/pagination.ts';
import { monitorIncidents, monitorResults } from '../../monitors/history.ts';
import { MonitorCreateBody, MonitorListQuery, MonitorUpdateBody, ResultsQuery } from '../../monitors/schemas.ts';
import { listRegions } from '../../monitors/regions/service.ts';
import { MonitorTestQuery, testDraft, testSaved } from '../../monitors/check-test.ts';
import { AppError } from '../../platform/errors.ts';
import * as monitors from '../../monitors/service.ts';
import { creates, overwrites, readOnly, toggles, type ToolContext } from '../context.ts';
import { run } from '../result.ts';

const Id = z.object({ id: z.uuid().describe('The monitor id.') });
export const Paging = {
  page: z.number().int().min(1).default(1),
  per_page: z.number().int().min(1).max(MAX_PER_PAGE).default(25),
};
const limit = z.number().int().min(1).max(MAX_PER_PAGE).default(20).describe('How many, newest first.');

/** Monitor tools: the REST API's verbs, through the same services and schemas. */
export function monitorTools(server: McpServer, t: ToolContext): void {
  const { ctx, principal } = t;

  server.registerTool(
    'list_monitors',
    {
      title: 'List monitors',
      description:
        'Lists monitors of one project, or of all your projects (only those carrying `tag` when given), with type, status (0 pending, 1 up, 2 down, 3 paused, 4 degraded), uptime, tags and last check.',
      inputSchema: MonitorListQuery.extend(Paging),
      annotations: readOnly,
    },
    async (args) =>
      run(async () => {
        const { items, total } = await monitors.listMonitors(ctx, principal, args.project_id, args, { tag: args.tag });
        return { data: items, meta: { current_page: args.page, per_page: args.per_page, total } };
      }),
  );

  server.registerTool(
    'get_monitor',
    {
      title: 'Get a monitor',
      description: 'One monitor with its settings, status, uptime and incident figures.',
      inputSchema: Id,
      annotations: readOnly,
    },
    async ({ id }) => run(() => monitors.getMonitor(ctx, principal, id)),
  );

  server.registerTool(
    'create_monitor',
    {
      title: 'Create a monitor',
      description:
        'Creates a monitor in a project (same fields as POST /monitors; _method is the HTTP method, default GET). `type` picks the check (http by default, tcp, dns, icmp, websocket, grpc, multistep; the url takes its scheme), `settings` its settings and `assertions` what it must see (docs/checks.md). Try it first with test_monitor.',
      inputSchema: MonitorCreateBody,
      annotations: creates,
    },
    async (body) => run(() => monitors.createMonitor(ctx, principal, body)),
  );

  server.registerTool(
    'update_monitor',
    {
      title: 'Update a monitor',
      description: 'Changes the fields given in `changes` (same fields as PUT /monitors/{id}); fields left out are kept.',
      inputSchema: Id.extend({ changes: MonitorUpdateBody }),
      annotations: overwrites,
    },
    async ({ id, changes }) => run(() => monitors.updateMonitor(ctx, principal, id, changes)),
  );

  server.registerTool(
    'test_monitor',
    {
      title: 'Test a monitor now',
      description:
        "Runs a check once from a region (any region with an agent when left out) and returns what it saw: ok, degraded, status code, timings, error, every assertion's outcome and details (certificate, DNS answers, ping figures, steps). Give `id` to test a saved monitor, or `monitor` (the fields of create_monitor) to test one before creating it. Nothing is stored or alerted.",
      inputSchema: z.object({
        id: z.uuid().optional().describe('A saved monitor to test.'),
        monitor: MonitorCreateBody.optional().describe('A monitor to test before creating it (the fields of create_monitor).'),
        region: MonitorTestQuery.shape.region,
      }),
      annotations: { ...readOnly, openWorldHint: true },
    },
    async ({ id, monitor, region }) =>
      run(async () => {
        if ((id === undefined) === (monitor === undefined)) {
          throw new AppError('VALIDATION', 'Give either id or monitor.', { id: ['Give either id or monitor.'] });
        }
        if (id !== undefined) return testSaved(ctx, principal, id, region);
        return testDraft(ctx, principal, { ...monitor!, ...(region !== undefined ? { region } : {}) });
      }),
  );

  server.registerTool(
    'pause_monitor',
    {
      title: 'Pause a monitor',
      description: 'Stops checks and alerts of a monitor until it is resumed.',
      inputSchema: Id,
      annotations: toggles,
    },
    async ({ id }) => run(() => monitors.updateMonitor(ctx, principal, id, { active: false })),
  );

  server.registerTool(
    'resume_monitor',
    { title: 'Resume a monitor', description: 'Starts checking a paused monitor again.', inputSchema: Id, annotations: toggles },
    async ({ id }) => run(() => monitors.updateMonitor(ctx, principal, id, { active: true })),
  );

  server.registerTool(
    'monitor_results',
    {
      title: 'Recent check results',
      description: 'The latest checks of a monitor, newest first: region, status code, timing phases in ms, error.',
      inputSchema: Id.extend(ResultsQuery.shape).extend({ limit }),
      annotations: readOnly,
    },
    async ({ id, region, limit: n }) =>
      run(async () => {
        return (await monitorResults(ctx, principal, id, region, { page: 1, per_page: n })).items;
      }),
  );

  server.registerTool(
    'monitor_incidents',
    {
      title: 'Incidents of a monitor',
      description:
        'Down periods of a monitor, newest first, with duration in seconds, cause, failing regions and what each region saw (evidence); ended_at is null while ongoing.',
      inputSchema: Id.extend({ limit }),
      annotations: readOnly,
    },
    async ({ id, limit: n }) =>
      run(async () => {
        return (await monitorIncidents(ctx, principal, id, { page: 1, per_page: n })).items;
      }),
  );

  server.registerTool(
    'list_regions',
    {
      title: 'List probe regions',
      description:
        'The probe regions monitors are checked from, each healthy or degraded (silent, canaries unreachable, or disagreeing with the other regions), with live agents. A degraded region abstains: its results do not put monitors down.',
      inputSchema: z.object({}),
      annotations: readOnly,
    },
    async () => run(() => listRegions(ctx)),
  );
}
