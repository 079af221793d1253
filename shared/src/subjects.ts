/**
 * Every NATS name the product uses: streams, KV buckets and subjects.
 * Nothing else in the code base spells a subject.
 *
 * Grammar (ns = NATS_NAMESPACE, default "uptime"):
 *
 *   <ns>.results.<region>.<monitor_id>        stream <ns>_RESULTS  one message per check
 *   <ns>.pings.<partition>.<heartbeat_id>     stream <ns>_PINGS    one message per ping
 *   <ns>.events.<project_id>.<kind>           stream <ns>_EVENTS   monitor.down, heartbeat.up, ...
 *   <ns>.checks.test[.<region>]               request/reply        "test now": one check, its result as the reply
 *
 *   KV <ns>_assignments  key <region>.<monitor_id>   the monitor as an agent needs it
 *   KV <ns>_agents       key <region>.<agent_id>     agent presence (bucket TTL)
 *   KV <ns>_heartbeats   key <heartbeat_id>          ids a ping edge may accept
 *   KV <ns>_leases       key <role>.<partition>      partition ownership (revision CAS + bucket TTL)
 *
 * Event kinds contain a dot ("monitor.down"), so an events subject has five tokens:
 * subscribe to `<ns>.events.*.monitor.>` for every monitor event of every project.
 */
export type Names = ReturnType<typeof natsNames>;

const token = /^[A-Za-z0-9_-]+$/;

function assertToken(kind: string, value: string): string {
  if (!token.test(value)) throw new Error(`invalid ${kind} for a NATS subject: ${JSON.stringify(value)}`);
  return value;
}

export function natsNames(namespace: string) {
  const ns = assertToken('namespace', namespace);
  return {
    namespace: ns,
    streams: {
      results: `${ns}_RESULTS`,
      pings: `${ns}_PINGS`,
      events: `${ns}_EVENTS`,
    },
    buckets: {
      assignments: `${ns}_assignments`,
      agents: `${ns}_agents`,
      heartbeats: `${ns}_heartbeats`,
      leases: `${ns}_leases`,
    },
    subjects: {
      results: `${ns}.results.>`,
      result: (region: string, monitorId: string) =>
        `${ns}.results.${assertToken('region', region)}.${assertToken('monitor id', monitorId)}`,
      pings: `${ns}.pings.>`,
      pingPartition: (partition: number) => `${ns}.pings.${partition}.*`,
      ping: (partition: number, heartbeatId: string) => `${ns}.pings.${partition}.${assertToken('heartbeat id', heartbeatId)}`,
      /**
       * Core NATS request/reply (no stream): "test now" of a monitor's check, answered by one agent
       * (a queue group) of the region named, or of any region without one.
       */
      checkTest: (region?: string) => (region === undefined ? `${ns}.checks.test` : `${ns}.checks.test.${assertToken('region', region)}`),
      events: `${ns}.events.>`,
      event: (projectId: string, kind: string) => {
        const [subject, verb] = kind.split('.');
        return `${ns}.events.${assertToken('project id', projectId)}.${assertToken('event kind', subject ?? '')}.${assertToken('event kind', verb ?? '')}`;
      },
    },
    keys: {
      assignment: (region: string, monitorId: string) => `${assertToken('region', region)}.${assertToken('monitor id', monitorId)}`,
      regionAssignments: (region: string) => `${assertToken('region', region)}.>`,
      agent: (region: string, agentId: string) => `${assertToken('region', region)}.${assertToken('agent id', agentId)}`,
      lease: (role: string, partition: number) => `${assertToken('role', role)}.${partition}`,
    },
  };
}
