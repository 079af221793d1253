import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { openTestAlert } from '../harness/alerts.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { webClient, type WebClient } from './client.ts';

/** The dashboard's side of dependencies, flapping and alert grouping (ADR 0030). */
describe('dashboard: dependencies, flapping and grouping', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let web: WebClient;
  let api: Call;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    web = webClient(cp.url);
    await web.signIn(ada.email, ada.password);
    api = apiClient(cp.url, ada.token);
  });
  after(() => cp.stop());

  const monitorFields = {
    name: 'Checkout',
    url: 'https://shop.example/health',
    _method: 'GET',
    valid_http_codes: '200-299',
    interval: '60',
  };

  it('creates a monitor that depends on another and detects flapping, from its form', async () => {
    const parent = (await api('POST', '/monitors', { name: 'Edge host', url: 'https://edge.example', project_id: ada.project_id })).body
      .data;
    const form = await web.get('/app/monitors/new');
    assert.match(form.text, /<select\s+id="f-depends_on"\s+name="depends_on"\s+multiple/);
    assert.match(form.text, new RegExp(`<option value="monitor:${parent.id}"\\s*>Edge host</option>`));

    const created = await web.submit('/app/monitors/new', '/app/monitors', {
      ...monitorFields,
      depends_on: `monitor:${parent.id}`,
      flap_threshold: '5',
      flap_window_minutes: '15',
    });
    assert.equal(created.status, 303, created.text.slice(0, 500));
    const id = created.location!.split('/').at(-1)!;
    const read = (await api('GET', `/monitors/${id}`)).body.data;
    assert.deepEqual(read.depends_on, [{ type: 'monitor', id: parent.id }]);
    assert.deepEqual([read.flap_threshold, read.flap_window_seconds], [5, 900]);

    const page = await web.get(`/app/monitors/${id}`);
    assert.match(page.text, new RegExp(`data-testid="depends-on"[^]*?<a href="/app/monitors/${parent.id}"\\s*>Edge host</a`));
    assert.match(page.text, /more than 5 changes within 15 min/);
    // The edit form does not offer the monitor itself, and keeps the choice made.
    const edit = await web.get(`/app/monitors/${id}/edit`);
    assert.doesNotMatch(edit.text, new RegExp(`value="monitor:${id}"`));
    assert.match(edit.text, new RegExp(`value="monitor:${parent.id}"\\s+selected`));
  });

  it('shows a refused dependency under its field and saves nothing', async () => {
    const a = (await api('POST', '/monitors', { name: 'A', url: 'https://a.example', project_id: ada.project_id })).body.data;
    const b = (
      await api('POST', '/monitors', {
        name: 'B',
        url: 'https://b.example',
        project_id: ada.project_id,
        depends_on: [{ type: 'monitor', id: a.id }],
      })
    ).body.data;
    const res = await web.submit(`/app/monitors/${a.id}/edit`, `/app/monitors/${a.id}/edit`, {
      ...monitorFields,
      name: 'A',
      depends_on: `monitor:${b.id}`,
    });
    assert.equal(res.status, 422);
    assert.match(res.text, /class="field invalid">\s*<label for="f-depends_on">[^]*would make a cycle/);
    assert.deepEqual((await api('GET', `/monitors/${a.id}`)).body.data.depends_on, []);
    const flap = await web.submit(`/app/monitors/${a.id}/edit`, `/app/monitors/${a.id}/edit`, { ...monitorFields, flap_threshold: '1' });
    assert.equal(flap.status, 422);
    assert.match(flap.text, /<label for="f-flap_threshold">/);
  });

  it("lists the dependents that joined a parent's outage on its incidents", async () => {
    const parent = (await api('POST', '/monitors', { name: 'Database', url: 'https://db.example', project_id: ada.project_id })).body.data;
    const child = (
      await api('POST', '/monitors', {
        name: 'Orders API',
        url: 'https://orders.example',
        project_id: ada.project_id,
        depends_on: [{ type: 'monitor', id: parent.id }],
      })
    ).body.data;
    // What ingest and the router write: both incidents, and the child's down held with the parent's.
    const [incident] = await cp.db.sql<{ id: string }[]>`
      insert into incidents (monitor_id, started_at, cause) values (${parent.id}, now() - interval '2 minutes', 'HTTP 503') returning id`;
    const [childIncident] = await cp.db.sql<{ id: string }[]>`
      insert into incidents (monitor_id, started_at, cause) values (${child.id}, now() - interval '1 minute', 'HTTP 502') returning id`;
    const eventId = randomUUID();
    const payload = {
      id: eventId,
      kind: 'monitor.down',
      occurred_at: new Date().toISOString(),
      project_id: ada.project_id,
      subject: { type: 'monitor', id: child.id, name: 'Orders API' },
      data: { incident_id: childIncident!.id },
    };
    await cp.db.sql`
      insert into held_alerts (event_id, project_id, subject_type, subject_id, kind, payload, occurred_at, release_at, reason,
        parent_id, parent_incident_id, settle_until)
      values (${eventId}, ${ada.project_id}, 'monitor', ${child.id}, 'monitor.down', ${cp.db.sql.json(payload)}, now(), 'infinity',
        'dependency', ${parent.id}, ${incident!.id}, now())`;

    const page = await web.get(`/app/monitors/${parent.id}`);
    assert.match(page.text, /1 dependent joined this outage/);
    assert.match(
      page.text,
      new RegExp(`<a href="/app/monitors/${child.id}"\\s*>Orders API</a\\s*>\\s*<span class="faint">alert held while this is down`),
    );
    const childPage = await web.get(`/app/monitors/${child.id}`);
    assert.match(childPage.text, new RegExp(`data-testid="joined"[^]*?<a href="/app/monitors/${parent.id}"\\s*>`));
  });

  it('sets a heartbeat dependency from its form', async () => {
    const parent = (await api('POST', '/monitors', { name: 'NFS', url: 'https://nfs.example', project_id: ada.project_id })).body.data;
    const res = await web.submit('/app/heartbeats/new', '/app/heartbeats', {
      name: 'Backup',
      schedule_kind: 'period',
      period: '3600',
      timezone: 'UTC',
      grace_period: '600',
      depends_on: `monitor:${parent.id}`,
    });
    assert.equal(res.status, 303, res.text.slice(0, 500));
    const id = res.location!.split('/').at(-1)!;
    assert.deepEqual((await api('GET', `/heartbeats/${id}`)).body.data.depends_on, [{ type: 'monitor', id: parent.id }]);
    const page = await web.get(`/app/heartbeats/${id}`);
    assert.match(page.text, new RegExp(`data-testid="depends-on"[^]*?<a href="/app/monitors/${parent.id}"\\s*>NFS</a`));
  });

  it("sets and clears the project's alert grouping from its settings", async () => {
    const bad = await web.submit('/app/settings/project', '/app/settings/project/alerting', { alert_group_seconds: '2' });
    assert.equal(bad.status, 422);
    assert.match(bad.text, /class="field invalid">\s*<label for="f-alert_group_seconds">/);
    assert.match(bad.text, /value="2"/);
    const set = await web.submit('/app/settings/project', '/app/settings/project/alerting', { alert_group_seconds: '30' });
    assert.equal(set.status, 303);
    assert.equal((await api('GET', `/projects/${ada.project_id}`)).body.data.alert_group_seconds, 30);
    assert.match((await web.get('/app/settings/project')).text, /id="f-alert_group_seconds"[^>]*value="30"/);
    await web.submit('/app/settings/project', '/app/settings/project/alerting', { alert_group_seconds: '' });
    assert.equal((await api('GET', `/projects/${ada.project_id}`)).body.data.alert_group_seconds, null);
  });

  it("sets the project's alert response, and acknowledges and snoozes from a heartbeat's page", async () => {
    const hook = (
      await api('POST', '/integrations', {
        project_id: ada.project_id,
        name: 'Lead',
        type: 'webhook',
        config: { url: 'https://hooks.example/lead' },
      })
    ).body.data;
    const bad = await web.submit('/app/settings/project', '/app/settings/project/response', {
      renotify_minutes: '0',
      escalate_after_minutes: '',
    });
    assert.equal(bad.status, 422);
    assert.match(bad.text, /class="field invalid">\s*<label for="f-renotify_minutes">/);
    const set = await web.submit('/app/settings/project', '/app/settings/project/response', {
      renotify_minutes: '10',
      escalate_after_minutes: '30',
      escalation_integration_ids: hook.id,
    });
    assert.equal(set.status, 303, set.text.slice(0, 300));
    const project = (await api('GET', `/projects/${ada.project_id}`)).body.data;
    assert.deepEqual([project.renotify_minutes, project.escalate_after_minutes, project.escalation_integration_ids], [10, 30, [hook.id]]);

    const hb = (await api('POST', '/heartbeats', { name: 'Billing run', project_id: ada.project_id })).body.data;
    const alertId = await openTestAlert(cp.db.sql, ada.project_id, hb);
    const page = await web.get(`/app/heartbeats/${hb.id}`);
    assert.match(page.text, /data-testid="open-alert"/);
    const list = await web.get('/app/alerts');
    assert.match(list.text, new RegExp(`data-alert="${alertId}"[^]*?Billing run[^]*?Acknowledge`));
    const ack = await web.submit(`/app/heartbeats/${hb.id}`, `/app/heartbeats/${hb.id}/acknowledge`, {});
    assert.equal(ack.status, 303);
    const alert = (await api('GET', `/alerts/${alertId}`)).body.data;
    assert.equal(alert.status, 'acknowledged');
    assert.equal(alert.acknowledged_by, ada.email);
    assert.match(
      (await web.get('/app/alerts')).text,
      new RegExp(`data-alert="${alertId}"[^]*?acknowledged by ${ada.email.replace('.', '\\.')}`),
    );
    const snooze = await web.submit(`/app/heartbeats/${hb.id}`, `/app/heartbeats/${hb.id}/snooze`, { minutes: '60' });
    assert.equal(snooze.status, 303);
    assert.ok((await api('GET', `/heartbeats/${hb.id}`)).body.data.snoozed_until);
    assert.match((await web.get(`/app/heartbeats/${hb.id}`)).text, /data-testid="snoozed"/);
    await web.submit(`/app/heartbeats/${hb.id}`, `/app/heartbeats/${hb.id}/snooze`, { minutes: '0' });
    assert.equal((await api('GET', `/heartbeats/${hb.id}`)).body.data.snoozed_until, null);
  });

  it('says on the overview and on the integration when an integration keeps failing', async () => {
    const hook = (
      await api('POST', '/integrations', {
        project_id: ada.project_id,
        name: 'Broken hook',
        type: 'webhook',
        config: { url: 'https://hooks.example/broken' },
      })
    ).body.data;
    assert.doesNotMatch((await web.get('/')).text, /data-testid="failing-integration"/);
    // As the delivery worker records a run of failures that the project was told of.
    await cp.db.sql`
      update integrations set failures = 5, failing_since = now() - interval '3 minutes', failing_alerted_at = now(),
        last_failure = 'HTTP 500 from hooks.example' where id = ${hook.id}`;
    assert.match((await web.get('/')).text, /data-testid="failing-integration"[^]*?Broken hook[^]*?5 attempts in a row/);
    const page = await web.get(`/app/integrations/${hook.id}`);
    assert.match(page.text, /data-testid="failing">Failing</);
    assert.match(page.text, /data-testid="integration-failing"[^]*?HTTP 500 from hooks\.example/);
    const read = (await api('GET', `/integrations/${hook.id}`)).body.data;
    assert.deepEqual([read.delivery.failing, read.delivery.failures, read.delivery.last_failure], [true, 5, 'HTTP 500 from hooks.example']);
  });

  it('sends regional incidents when asked on the form, and marks them on the monitor page', async () => {
    const created = await web.submit('/app/monitors/new', '/app/monitors', { ...monitorFields, name: 'Worldwide', alert_regional: 'on' });
    assert.equal(created.status, 303, created.text.slice(0, 500));
    const id = created.location!.split('/').at(-1)!;
    assert.equal((await api('GET', `/monitors/${id}`)).body.data.alert_regional, true);
    await cp.db
      .sql`insert into regional_incidents (monitor_id, started_at, cause, regions) values (${id}, now() - interval '3 minutes', 'HTTP 503', '{eu-west}')`;
    await cp.db.sql`update monitors set regional_regions = '{eu-west}' where id = ${id}`;
    const page = await web.get(`/app/monitors/${id}`);
    assert.match(page.text, /data-testid="regional"/);
    assert.match(page.text, /data-testid="failing-regions">failing in eu-west</);
    const edit = await web.get(`/app/monitors/${id}/edit`);
    assert.match(edit.text, /name="alert_regional" value="on"\s+checked/);
  });
});
