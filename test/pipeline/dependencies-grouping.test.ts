import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startAgent, type RunningAgent } from '../../probe-agent/src/agent.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startTarget, startWebhookSink, type Target } from '../harness/http.ts';
import { eventually } from '../harness/streams.ts';

/**
 * Dependencies and grouped alerts through the whole pipeline (ADR 0030): a real probe agent
 * checks local targets, ingest opens and closes incidents, the notify role routes the alert
 * events and a local webhook receiver records what is sent. The agent runs 5x faster (a 5 s
 * interval is a 1 s slot).
 */
describe('dependencies and grouped alerts end to end', () => {
  let cp: TestControlPlane;
  let agent: RunningAgent;
  let ada: TestAccount;
  let api: Call;
  let sink: Target;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api', 'assign', 'ingest', 'notify'] });
    agent = await startAgent({
      config: cp.config,
      nc: cp.nats.nc,
      log: quietLog,
      region: 'local',
      port: 0,
      pingPort: 0,
      timeScale: 0.2,
      checkKey: cp.cp.keys.checkCredentials,
    });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    sink = await startWebhookSink();
  });
  after(async () => {
    await agent.stop();
    await sink.close();
    await cp.stop();
  });

  const create = async (path: string, body: Record<string, unknown>) => {
    const res = await api('POST', path, body);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data;
  };
  const statuses = async (ids: readonly string[]) =>
    (await cp.db.sql<{ status: number }[]>`select status from monitors where id = any(${ids}::uuid[])`).map((r) => r.status);
  const allAre = async (ids: readonly string[], status: number) => (await statuses(ids)).every((s) => s === status);
  /**
   * Every alert event of these monitors routed, no hold still waiting on the clock, and every
   * delivery made sent.
   */
  const quiet = async (ids: readonly string[]) => {
    const [row] = await cp.db.sql<{ n: number }[]>`
      select (select count(*) from outbox_events where notified_at is null and payload #>> '{subject,id}' = any(${ids}::text[]))
        + (select count(*) from held_alerts where status = 'held' and subject_id = any(${ids}::uuid[]) and release_at <> 'infinity')
        + (select count(*) from deliveries where status in ('pending', 'sending')
             and project_id = (select project_id from monitors where id = ${ids[0]!}))
        as n`;
    return Number(row!.n) === 0;
  };
  const hooks = (projectId: string) =>
    sink.requests
      .map((r) => JSON.parse(r.body) as { event: string; project: { id: string }; subject: { id: string }; data: Record<string, unknown> })
      .filter((b) => b.project.id === projectId);

  it('sends one alert for a parent and its 30 children going down together, and lists all 31 in one incident', async () => {
    const project = await create('/projects', { name: 'Shop' });
    await create('/integrations', { project_id: project.id, name: 'ops', type: 'webhook', config: { url: `${sink.url}/shop` } });
    const host = await startTarget();
    try {
      const parent = await create('/monitors', { name: 'host', url: `${host.url}/`, project_id: project.id, interval: 5, timeout: 2 });
      const children: { id: string }[] = [];
      for (let i = 0; i < 30; i++) {
        children.push(
          await create('/monitors', {
            name: `service ${i}`,
            url: `${host.url}/service/${i}`,
            project_id: project.id,
            interval: 5,
            timeout: 2,
            depends_on: [{ type: 'monitor', id: parent.id }],
          }),
        );
      }
      const all = [parent.id, ...children.map((c) => c.id)];
      await eventually(() => allAre(all, 1), 'all 31 up', 30_000);

      host.respond({ status: 503, body: 'down' });
      await eventually(() => allAre(all, 2), 'all 31 down', 30_000);
      await eventually(() => quiet(all), 'every down routed and joined', 30_000);

      const sent = hooks(project.id);
      assert.equal(sent.length, 1, `one notification, got ${sent.map((s) => `${s.event} ${s.subject.id}`).join(', ')}`);
      assert.equal(sent[0]!.event, 'monitor.down');
      assert.equal(sent[0]!.subject.id, parent.id);

      const [incident] = (await api('GET', `/monitors/${parent.id}/incidents`)).body.data;
      assert.equal(incident.dependents.length, 30, 'the parent incident lists its 30 children');
      assert.deepEqual(new Set(incident.dependents.map((d: { id: string }) => d.id)), new Set(children.map((c) => c.id)));
      assert.ok(incident.dependents.every((d: { alert: string }) => d.alert === 'held'));
      const [childIncident] = (await api('GET', `/monitors/${children[0]!.id}/incidents`)).body.data;
      assert.deepEqual(childIncident.joined, { incident_id: incident.id, parent_id: parent.id });

      host.respond({ status: 200, body: 'ok' });
      await eventually(() => allAre(all, 1), 'all 31 up again', 30_000);
      await eventually(() => quiet(all), 'every up routed', 30_000);
      const after = hooks(project.id);
      assert.deepEqual(
        after.map((s) => `${s.event} ${s.subject.id}`),
        [`monitor.down ${parent.id}`, `monitor.up ${parent.id}`],
        "the children's recoveries send nothing, since their downs were never sent",
      );
      // Every child's history is whole: its own incident, opened and closed, and its results.
      for (const c of children) {
        const incidents = (await api('GET', `/monitors/${c.id}/incidents`)).body.data;
        assert.equal(incidents.length, 1);
        assert.notEqual(incidents[0].ended_at, null);
        const results = (await api('GET', `/monitors/${c.id}/results?per_page=100`)).body.data;
        assert.ok(results.some((r: { ok: boolean }) => !r.ok) && results.some((r: { ok: boolean }) => r.ok));
      }
    } finally {
      await host.close();
    }
  });

  it('sends the child alone when its parent recovers while the child is still down', async () => {
    const project = await create('/projects', { name: 'Warehouse' });
    await create('/integrations', { project_id: project.id, name: 'ops', type: 'webhook', config: { url: `${sink.url}/warehouse` } });
    const db = await startTarget();
    const app = await startTarget();
    try {
      const parent = await create('/monitors', { name: 'database', url: `${db.url}/`, project_id: project.id, interval: 5, timeout: 2 });
      const child = await create('/monitors', {
        name: 'app',
        url: `${app.url}/`,
        project_id: project.id,
        interval: 5,
        timeout: 2,
        depends_on: [{ type: 'monitor', id: parent.id }],
      });
      await eventually(() => allAre([parent.id, child.id], 1), 'both up', 30_000);
      db.respond({ status: 503 });
      await eventually(() => allAre([parent.id], 2), 'the database down', 30_000);
      app.respond({ status: 500 });
      await eventually(() => allAre([child.id], 2), 'the app down', 30_000);
      await eventually(() => quiet([parent.id, child.id]), 'routed', 30_000);
      assert.deepEqual(
        hooks(project.id).map((s) => `${s.event} ${s.subject.id}`),
        [`monitor.down ${parent.id}`],
      );

      db.respond({ status: 200 });
      await eventually(
        async () => hooks(project.id).some((s) => s.event === 'monitor.down' && s.subject.id === child.id),
        "the child's down sent once the parent is up",
        30_000,
      );
      assert.deepEqual(
        hooks(project.id).map((s) => `${s.event} ${s.subject.id}`),
        [`monitor.down ${parent.id}`, `monitor.up ${parent.id}`, `monitor.down ${child.id}`],
      );
      const [incident] = (await api('GET', `/monitors/${parent.id}/incidents`)).body.data;
      assert.equal(incident.dependents[0].alert, 'released');
    } finally {
      await db.close();
      await app.close();
    }
  });

  it('groups 31 unrelated monitors failing within the window into one message per integration', async () => {
    // 20 s: all 31 fail within a second or two of data time, but a loaded machine can detect them
    // several seconds apart; the window is counted on the events' own times.
    const project = await create('/projects', { name: 'Fleet', alert_group_seconds: 20 });
    await create('/integrations', { project_id: project.id, name: 'ops', type: 'webhook', config: { url: `${sink.url}/fleet-ops` } });
    await create('/integrations', { project_id: project.id, name: 'chat', type: 'webhook', config: { url: `${sink.url}/fleet-chat` } });
    const targets: Target[] = [];
    try {
      const ids: string[] = [];
      for (let i = 0; i < 31; i++) {
        const t = await startTarget();
        targets.push(t);
        ids.push((await create('/monitors', { name: `site ${i}`, url: `${t.url}/`, project_id: project.id, interval: 5, timeout: 2 })).id);
      }
      await eventually(() => allAre(ids, 1), 'all 31 up', 30_000);
      for (const t of targets) t.respond({ status: 502 });
      await eventually(() => allAre(ids, 2), 'all 31 down', 30_000);
      await eventually(() => quiet(ids), 'the group released', 30_000);

      const sent = hooks(project.id);
      assert.equal(
        sent.length,
        2,
        `one message per integration, got ${JSON.stringify(
          sent.map((b) => [b.event, b.data.count, (b.data.alerts as { occurred_at: string }[] | undefined)?.map((a) => a.occurred_at)]),
        )}`,
      );
      for (const path of ['/fleet-ops', '/fleet-chat']) {
        const [request] = sink.requests.filter((r) => r.url === path);
        const body = JSON.parse(request!.body);
        assert.equal(body.event, 'alerts.grouped');
        assert.equal(body.subject.type, 'project');
        assert.equal(body.data.status, 'down');
        assert.equal(body.data.count, 31);
        assert.deepEqual(new Set(body.data.alerts.map((a: { subject: { id: string } }) => a.subject.id)), new Set(ids));
        assert.match(body.message, /^31 monitors of project "Fleet" are down: /);
      }
    } finally {
      for (const t of targets) await t.close();
    }
  });
});
