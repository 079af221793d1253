/**
 * The `operationId` of every documented operation, by method and OpenAPI path. Client generators
 * name their functions after these, so a released id never changes; a new route gets its entry
 * here (the document is refused at start-up without one, or when two ids collide).
 *
 * Naming rule (ADR 0019): camelCase, a verb then the resource.
 * - a collection: `list<Resources>` (GET), `create<Resource>` (POST);
 * - one resource: `get<Resource>` (GET), `update<Resource>` (PUT or PATCH), `delete<Resource>` (DELETE);
 * - a collection below a resource: `list<Resource><Items>` (`listMonitorResults`);
 * - an action on a resource: `<verb><Resource>[<Object>]` (`testIntegration`, `rotateTriggerToken`);
 * - one action served by two methods: the POST has the plain name, the GET adds `WithGet`.
 */
export const operationIds: Readonly<Record<string, string>> = {
  'GET /organizations': 'listOrganizations',

  'GET /projects': 'listProjects',
  'POST /projects': 'createProject',
  'GET /projects/{id}': 'getProject',
  'PUT /projects/{id}': 'updateProject',
  'DELETE /projects/{id}': 'deleteProject',

  'GET /monitors': 'listMonitors',
  'POST /monitors': 'createMonitor',
  'GET /monitors/{id}': 'getMonitor',
  'PUT /monitors/{id}': 'updateMonitor',
  'DELETE /monitors/{id}': 'deleteMonitor',
  'GET /monitors/{id}/results': 'listMonitorResults',
  'GET /monitors/{id}/incidents': 'listMonitorIncidents',
  'POST /monitor-tests': 'testMonitorDraft',
  'POST /monitors/{id}/test': 'testMonitor',
  'POST /monitors/{id}/snooze': 'snoozeMonitor',
  'DELETE /monitors/{id}/snooze': 'unsnoozeMonitor',
  'GET /monitors/{id}/badge': 'getMonitorBadge',
  'POST /monitors/{id}/badge': 'createMonitorBadge',
  'DELETE /monitors/{id}/badge': 'deleteMonitorBadge',

  'GET /regions': 'listRegions',

  'GET /heartbeats': 'listHeartbeats',
  'POST /heartbeats': 'createHeartbeat',
  'GET /heartbeats/{id}': 'getHeartbeat',
  'PATCH /heartbeats/{id}': 'updateHeartbeat',
  'DELETE /heartbeats/{id}': 'deleteHeartbeat',
  'GET /heartbeats/{id}/pings': 'listHeartbeatPings',
  'POST /heartbeats/{id}/snooze': 'snoozeHeartbeat',
  'DELETE /heartbeats/{id}/snooze': 'unsnoozeHeartbeat',
  'GET /heartbeats/{id}/badge': 'getHeartbeatBadge',
  'POST /heartbeats/{id}/badge': 'createHeartbeatBadge',
  'DELETE /heartbeats/{id}/badge': 'deleteHeartbeatBadge',

  'GET /alerts': 'listAlerts',
  'GET /alerts/{id}': 'getAlert',
  'POST /alerts/{id}/acknowledge': 'acknowledgeAlert',
  'POST /alerts/{id}/snooze': 'snoozeAlert',

  'GET /integrations': 'listIntegrations',
  'POST /integrations': 'createIntegration',
  'GET /integrations/{id}': 'getIntegration',
  'PATCH /integrations/{id}': 'updateIntegration',
  'DELETE /integrations/{id}': 'deleteIntegration',
  'POST /integrations/{id}/preview': 'previewIntegration',
  'POST /integrations/{id}/test': 'testIntegration',
  'GET /integrations/{id}/deliveries': 'listIntegrationDeliveries',

  'GET /triggers': 'listTriggers',
  'POST /triggers': 'createTrigger',
  'GET /triggers/{id}': 'getTrigger',
  'PATCH /triggers/{id}': 'updateTrigger',
  'DELETE /triggers/{id}': 'deleteTrigger',
  'POST /triggers/{id}/token': 'rotateTriggerToken',
  'GET /triggers/{id}/events': 'listTriggerEvents',

  'GET /maintenance-windows': 'listMaintenanceWindows',
  'POST /maintenance-windows': 'createMaintenanceWindow',
  'GET /maintenance-windows/{id}': 'getMaintenanceWindow',
  'PATCH /maintenance-windows/{id}': 'updateMaintenanceWindow',
  'DELETE /maintenance-windows/{id}': 'deleteMaintenanceWindow',

  'GET /status-pages': 'listStatusPages',
  'POST /status-pages': 'createStatusPage',
  'GET /status-pages/{id}': 'getStatusPage',
  'PATCH /status-pages/{id}': 'updateStatusPage',
  'DELETE /status-pages/{id}': 'deleteStatusPage',
  'POST /status-pages/{id}/address': 'changeStatusPageAddress',
  'GET /status-pages/{id}/incidents': 'listStatusPageIncidents',
  'POST /status-pages/{id}/incidents': 'createStatusPageIncident',
  'GET /status-pages/{id}/incidents/{incident_id}': 'getStatusPageIncident',
  'PATCH /status-pages/{id}/incidents/{incident_id}': 'updateStatusPageIncident',
  'DELETE /status-pages/{id}/incidents/{incident_id}': 'deleteStatusPageIncident',
  'POST /status-pages/{id}/incidents/{incident_id}/updates': 'createStatusPageIncidentUpdate',
  'GET /status-pages/{id}/subscribers': 'listStatusPageSubscribers',
  'POST /status-pages/{id}/subscribers': 'createStatusPageSubscriber',
  'GET /status-pages/{id}/subscribers/{subscriber_id}': 'getStatusPageSubscriber',
  'DELETE /status-pages/{id}/subscribers/{subscriber_id}': 'deleteStatusPageSubscriber',

  'POST /api/notify/{id}': 'fireTrigger',
  'GET /api/notify/{id}': 'fireTriggerWithGet',
};

/** The groups operations are tagged with, in the order a reader meets them. */
export const tags = [
  { name: 'Organizations', description: 'The organizations you belong to, with your role in each.' },
  { name: 'Projects', description: 'Projects hold monitors, heartbeats, triggers and integrations.' },
  { name: 'Monitors', description: 'HTTP checks from one or more regions, with their results and incidents.' },
  {
    name: 'Regions',
    description: 'The probe regions monitors are checked from, and whether each can be trusted to vote (a degraded region abstains).',
  },
  { name: 'Heartbeats', description: 'Recurring jobs that report to a ping URL, with the pings received.' },
  {
    name: 'Alerts',
    description:
      'Outages of monitors and heartbeats as people respond to them: acknowledge, snooze; re-notified and escalated by the project policy.',
  },
  { name: 'Integrations', description: 'Where notifications go (webhook, Slack, email...), with their delivery log.' },
  { name: 'Triggers', description: 'Notification triggers: inbound addresses that send a message through integrations.' },
  {
    name: 'Maintenance windows',
    description:
      'One-off or recurring (cron, duration, time zone) windows covering monitors, heartbeats or a whole project: checks go on, alerts are held, uptime leaves the time out.',
  },
  {
    name: 'Status pages',
    description:
      "Public pages at random addresses showing groups of a project's monitors and heartbeats, their 90-day uptime, maintenance and one banner for the whole page.",
  },
  {
    name: 'Notify URL',
    description:
      "Calling a trigger: public, at `{trigger_base_url}/api/notify/<id>`, with the trigger's own optional token instead of an API token.",
  },
] as const;
