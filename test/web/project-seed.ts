import { randomUUID } from 'node:crypto';
import { apiClient } from '../harness/api.ts';
import type { TestControlPlane } from '../harness/control-plane.ts';
import type { TestAccount } from '../harness/factories.ts';
import { eventually } from '../harness/streams.ts';
import { backdate, markChecked, seedIncident, seedResults } from './seed.ts';

export interface SeededProject {
  /** Up, two months old, with a day of checks and incidents 3 hours, 12 days and 33 days ago. */
  checkout: { id: string };
  /** Down since 40 minutes ago, with a long name and URL. */
  search: { id: string };
  /** Paused. */
  docs: { id: string };
  /** Pinged: a run that took 2 s, a failed run with a body (down), a success (up again). */
  backup: { id: string; ping_url: string };
  /** With every run rule set: a run judged too short (run id), one run still open. */
  exportJob: { id: string; ping_url: string };
  trigger: { id: string };
  integration: { id: string };
}

const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000);

/** A ping through the control plane's own ping URL, logged once the deadline role took it. */
async function ping(cp: TestControlPlane, url: string, body?: string): Promise<void> {
  const res = await fetch(url.replace(cp.config.PUBLIC_URL, cp.url), { method: body ? 'POST' : 'GET', ...(body ? { body } : {}) });
  if (res.status !== 200) throw new Error(`ping ${url}: ${res.status}`);
}

/**
 * A project as a team that has used the product for a while has it, for pages that show data:
 * monitors in every state with checks, incidents and tags, a pinged heartbeat, a trigger that was
 * called, a webhook integration. Needs the api and deadline roles (pings are logged by deadline).
 */
export async function seedProject(cp: TestControlPlane, account: TestAccount, webhookUrl: string): Promise<SeededProject> {
  const api = apiClient(cp.url, account.token);
  const project_id = account.project_id;
  const create = async (body: object) => (await api('POST', '/monitors', { project_id, ...body })).body.data as { id: string };

  const checkout = await create({ name: 'Checkout API', url: 'https://shop.example.test/health', tags: ['prod', 'checkout'] });
  await seedResults(cp.db.sql, checkout.id, { failEvery: 37 });
  await markChecked(cp.db.sql, checkout.id, 1);
  await backdate(cp.db.sql, checkout.id, 60);
  await seedIncident(cp.db.sql, checkout.id, hoursAgo(3), new Date(hoursAgo(3).getTime() + 420_000));
  // 10:00 to 12:00 UTC of the day 12 days ago: within one UTC day whatever the time of the run.
  const twelveDaysAgo = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() - 12, 10));
  await seedIncident(cp.db.sql, checkout.id, twelveDaysAgo, new Date(twelveDaysAgo.getTime() + 2 * 3_600_000), 'Unexpected status 503');
  await seedIncident(cp.db.sql, checkout.id, hoursAgo(24 * 33), hoursAgo(24 * 33 - 10), 'DNS lookup failed for db.internal (ENOTFOUND)');

  const search = await create({
    name: 'Search service of the storefront in the European region, behind the new load balancer',
    url: `https://search.eu-west.storefront.example.test/api/v2/health/deep-check?include=${'index,replicas,'.repeat(6)}cache`,
    tags: ['prod', 'search', 'eu west'],
  });
  await seedResults(cp.db.sql, search.id, { hours: 2, stepMinutes: 2, failEvery: 4 });
  await markChecked(cp.db.sql, search.id, 2);
  await backdate(cp.db.sql, search.id, 3);
  await seedIncident(cp.db.sql, search.id, hoursAgo(0.7), null, 'Timed out after 10000 ms');

  const docs = await create({ name: 'Docs', url: 'https://docs.example.test/', active: false, tags: ['staging'] });

  const backup = (await api('POST', '/heartbeats', { name: 'Nightly backup', project_id, cron_schedule: '30 2 * * *', grace_period: 1800 }))
    .body.data as SeededProject['backup'];
  const log =
    'pg_dump: error: connection to server at "db.internal" failed: FATAL:  password authentication failed for user "backup"\n'.repeat(3);
  await ping(cp, `${backup.ping_url}/start`);
  await new Promise((r) => setTimeout(r, 20));
  await ping(cp, backup.ping_url);
  await ping(cp, `${backup.ping_url}/start`);
  await ping(cp, `${backup.ping_url}/3`, log);
  await ping(cp, backup.ping_url);
  await eventually(async () => (await api('GET', `/heartbeats/${backup.id}/pings`)).body.meta?.total === 5, 'the pings to be logged');
  await eventually(
    async () =>
      (await cp.db.sql`select 1 from outbox_events where kind = 'heartbeat.up' and payload #>> '{subject,id}' = ${backup.id}`).length > 0,
    'the heartbeat to be up again',
  );

  const exportJob = (
    await api('POST', '/heartbeats', {
      name: 'Hourly export to the data warehouse',
      project_id,
      period: 3600,
      grace_period: 900,
      max_duration: 1200,
      min_duration: 60,
      too_frequent_ratio: 0.5,
      alert_after_failures: 3,
      success_exit_codes: [0, 3],
      output_rules: [
        { match: 'regex', value: '(ERROR|FATAL): .*(warehouse|export)', outcome: 'fail' },
        { match: 'contains', value: 'nothing to export this hour', outcome: 'success' },
      ],
    })
  ).body.data as SeededProject['exportJob'];
  const [quick, open] = [randomUUID(), randomUUID()];
  await ping(cp, `${exportJob.ping_url}/start?rid=${quick}`);
  await ping(cp, `${exportJob.ping_url}?rid=${quick}`);
  await ping(cp, `${exportJob.ping_url}/start?rid=${open}`);
  await eventually(
    async () => (await api('GET', `/heartbeats/${exportJob.id}/pings`)).body.meta?.total === 3,
    'the export pings to be logged',
  );

  const integration = (
    await api('POST', '/integrations', { project_id, name: 'Ops webhook', type: 'webhook', config: { url: webhookUrl } })
  ).body.data as { id: string };
  const trigger = (
    await api('POST', '/triggers', {
      project_id,
      name: 'Deploy finished',
      default_message: 'A deploy went out',
      integration_ids: [integration.id],
    })
  ).body.data as { id: string };
  const fired = await fetch(`${cp.url}/api/notify/${trigger.id}?message=${encodeURIComponent('v1.4.0 is live on every region')}`, {
    method: 'POST',
  });
  if (fired.status !== 202) throw new Error(`trigger call: ${fired.status}`);
  return { checkout, search, docs, backup, exportJob, trigger, integration };
}
