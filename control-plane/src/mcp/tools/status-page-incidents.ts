import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import {
  IncidentListQuery,
  IncidentUpdatePostBody,
  StatusPageIncidentCreateBody,
  StatusPageIncidentUpdateBody,
} from '../../status-pages/incidents/schemas.ts';
import * as incidents from '../../status-pages/incidents/service.ts';
import { creates, overwrites, readOnly, type ToolContext } from '../context.ts';
import { run } from '../result.ts';
import { Paging } from './monitors.ts';

const pageId = z.uuid().describe('The status page id.');
const incidentId = z.uuid().describe('The incident id.');

export function statusPageIncidentTools(server: McpServer, t: ToolContext): void {
  const { ctx, principal } = t;

  server.registerTool(
    'list_status_page_incidents',
    {
      title: 'List the incidents of a status page',
      description:
        'Incidents written on a status page, drafts included, newest first: title, impact (none, minor, major, critical), status (investigating, identified, monitoring, resolved), published, the components affected, the timeline of updates (newest first), the postmortem, the outage a draft was made from, and suggested_update (a resolved update worth posting once that outage ended).',
      inputSchema: IncidentListQuery.extend(Paging).extend({ status_page_id: pageId }),
      annotations: readOnly,
    },
    async (args) =>
      run(async () => {
        const { items, total } = await incidents.listIncidents(ctx, principal, args.status_page_id, args, args);
        return { data: items, meta: { current_page: args.page, per_page: args.per_page, total } };
      }),
  );

  server.registerTool(
    'get_status_page_incident',
    {
      title: 'Get a status page incident',
      description:
        'One incident of a status page (as GET /status-pages/{id}/incidents/{incident_id}), draft or published, with its timeline of updates (newest first) and its postmortem.',
      inputSchema: z.object({ status_page_id: pageId, incident_id: incidentId }),
      annotations: readOnly,
    },
    async ({ status_page_id, incident_id }) => run(() => incidents.getIncident(ctx, principal, status_page_id, incident_id)),
  );

  server.registerTool(
    'create_status_page_incident',
    {
      title: 'Write a status page incident',
      description:
        'Writes an incident on a status page (same fields as POST /status-pages/{id}/incidents): title, impact, status, message (the first update, Markdown), components [{ type: monitor|heartbeat, id }] the page shows, published (default false: a draft only the team sees).',
      inputSchema: StatusPageIncidentCreateBody.extend({ status_page_id: pageId }),
      annotations: creates,
    },
    async ({ status_page_id, ...body }) => run(() => incidents.createIncident(ctx, principal, status_page_id, body)),
  );

  server.registerTool(
    'update_status_page_incident',
    {
      title: 'Update a status page incident',
      description:
        'Changes the fields given of an incident (same fields as PATCH /status-pages/{id}/incidents/{incident_id}): title, impact, components, published (true publishes it), postmortem (Markdown), postmortem_published. The status moves with post_status_page_incident_update.',
      inputSchema: z.object({ status_page_id: pageId, incident_id: incidentId, changes: StatusPageIncidentUpdateBody }),
      annotations: overwrites,
    },
    async ({ status_page_id, incident_id, changes }) =>
      run(() => incidents.updateIncident(ctx, principal, status_page_id, incident_id, changes)),
  );

  server.registerTool(
    'post_status_page_incident_update',
    {
      title: 'Post an update on a status page incident',
      description:
        'Adds an update (status and a Markdown message) to an incident’s timeline and moves the incident to that status: resolved resolves it, any other status reopens a resolved one.',
      inputSchema: IncidentUpdatePostBody.extend({ status_page_id: pageId, incident_id: incidentId }),
      annotations: creates,
    },
    async ({ status_page_id, incident_id, ...body }) =>
      run(() => incidents.postIncidentUpdate(ctx, principal, status_page_id, incident_id, body)),
  );

  server.registerTool(
    'delete_status_page_incident',
    {
      title: 'Delete a status page incident',
      description:
        'Deletes an incident and its timeline: it leaves the public page and its feeds. An outage it was drafted from is not drafted again.',
      inputSchema: z.object({ status_page_id: pageId, incident_id: incidentId }),
      annotations: overwrites,
    },
    async ({ status_page_id, incident_id }) =>
      run(async () => {
        await incidents.deleteIncident(ctx, principal, status_page_id, incident_id);
        return { message: 'Incident deleted successfully' };
      }),
  );
}
