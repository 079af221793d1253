import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { version } from '../../../shared/src/version.ts';
import type { ToolContext } from './context.ts';
import { alertTools } from './tools/alerts.ts';
import { badgeTools } from './tools/badges.ts';
import { heartbeatTools } from './tools/heartbeats.ts';
import { integrationTools } from './tools/integrations.ts';
import { maintenanceTools } from './tools/maintenance.ts';
import { monitorTools } from './tools/monitors.ts';
import { statusTools } from './tools/status.ts';
import { statusPageTools } from './tools/status-pages.ts';
import { statusPageIncidentTools } from './tools/status-page-incidents.ts';
import { statusPageSubscriberTools } from './tools/status-page-subscribers.ts';
import { triggerTools } from './tools/triggers.ts';

const instructions = `Tools of an uptime monitoring service. Monitors check HTTP URLs from several regions
(status 0 pending, 1 up, 2 down, 3 paused); heartbeats watch cron jobs that call a ping URL;
triggers send a message through integrations (Slack, email, webhooks...), whose messages preview_integration shows; maintenance windows hold the alerts
of what they cover while they run; alerts are outages people acknowledge or snooze; status pages show groups of monitors and heartbeats publicly, with incidents people write (drafted on their own from outages) and subscribers told of them by email or webhook.
Everything belongs to a project: call list_projects first when you need a project_id.`;

/** One server per request (stateless): its tools act as the MCP token's user. */
export function buildMcpServer(t: ToolContext): McpServer {
  const server = new McpServer({ name: 'uptime', title: 'uptime', version }, { instructions });
  statusTools(server, t);
  monitorTools(server, t);
  heartbeatTools(server, t);
  triggerTools(server, t);
  integrationTools(server, t);
  maintenanceTools(server, t);
  statusPageTools(server, t);
  statusPageIncidentTools(server, t);
  statusPageSubscriberTools(server, t);
  alertTools(server, t);
  badgeTools(server, t);
  // The SDK advertises `tools.listChanged: true` as soon as a tool is registered. This server lives
  // for one request, answers with JSON (no stream to notify on) and its tools never change, so it
  // never sends that notification: a client must not wait for one.
  server.server.registerCapabilities({ tools: { listChanged: false } });
  return server;
}
