import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { DomainEvent } from '../../shared/src/contracts/events.ts';
import { applyOutageEvents, DRAFTER_CONSUMER } from '../../control-plane/src/status-pages/incidents/drafter.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { eventually } from '../harness/streams.ts';

/**
 * Incidents drafted from outages: the downs and ups of monitors and heartbeats come through EVENTS
 * (a real nats-server) to the notify role's drafter, which writes to a real Postgres. Replays and
 * redeliveries change nothing, whatever their order.
 */
describe('status page incidents drafted from outages', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let shop: string;
  let search: string;
  let planned: string;
  let backup: string;
  /** Shows the shop as "Web shop" and the backup heartbeat; drafts wait for a person. */
  let grouped: string;
  /** No groups: shows every monitor and heartbeat; publishes drafts at once. */
  let everything: string;
  /** Shows the search monitor only. */
  let searchOnly: string;

  const subject = (type: 'monitor' | 'heartbeat', id: string, name: string) => ({ type, id, name });
  const monitorEvent = (kind: 'monitor.down' | 'monitor.up', id: string, name: string, at: string, incident: string, extra = {}) =>
    ({
      id: randomUUID(),
      kind,
      occurred_at: at,
      project_id: ada.project_id,
      subject: subject('monitor', id, name),
      data: { url: 'https://shop.example', incident_id: incident, ...extra },
    }) satisfies DomainEvent;
  const heartbeatEvent = (kind: 'heartbeat.down' | 'heartbeat.up', at: string, downSince: string) =>
    ({
      id: randomUUID(),
      kind,
      occurred_at: at,
      project_id: ada.project_id,
      subject: subject('heartbeat', backup, 'backup-job'),
      data: { reason: 'missed', status: kind === 'heartbeat.down' ? 'down' : 'up', down_since: downSince },
    }) satisfies DomainEvent;

  /** Publishes events on EVENTS as the outbox does (the event id as Nats-Msg-Id, or another one for a replay). */
  const publish = async (events: DomainEvent[], msgIdSuffix = '') => {
    const js = jetstream(cp.nats.nc);
    for (const e of events)
      await js.publish(cp.nats.names.subjects.event(e.project_id, e.kind), JSON.stringify(e), { msgID: e.id + msgIdSuffix });
  };
  /** Resolves once the drafter has acknowledged every event of the stream. */
  const drained = async () => {
    const jsm = await jetstreamManager(cp.nats.nc);
    const last = (await jsm.streams.info(cp.nats.names.streams.events)).state.last_seq;
    await eventually(async () => {
      const info = await jsm.consumers.info(cp.nats.names.streams.events, DRAFTER_CONSUMER);
      return info.ack_floor.stream_seq >= last && info.num_ack_pending === 0;
    }, 'the drafter to acknowledge every event');
  };
  const incidentsOf = async (pageId: string) =>
    (await api('GET', `/status-pages/${pageId}/incidents?per_page=100`)).body.data as {
      id: string;
      title: string;
      impact: string;
      status: string;
      published: boolean;
      published_at: string | null;
      created_at: string;
      resolved_at: string | null;
      components: { type: string; id: string; name: string | null }[];
      updates: { status: string; message: string; at: string; by: string | null }[];
      source: { type: string; id: string; monitor_incident_id: string | null; ended_at: string | null } | null;
      suggested_update: { status: string; message: string } | null;
    }[];
  const rowCounts = async () => {
    const [row] = await cp.db.sql<{ incidents: number; updates: number }[]>`
      select (select count(*)::int from status_page_incidents) as incidents, (select count(*)::int from status_page_incident_updates) as updates`;
    return row!;
  };
  const level = async (pageId: string) => (await api('GET', `/status-pages/${pageId}`)).body.data.overall.level;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api', 'notify'] });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    const monitor = async (name: string) =>
      (await api('POST', '/monitors', { name, url: 'https://shop.example', project_id: ada.project_id })).body.data.id as string;
    shop = await monitor('shop-prod');
    search = await monitor('search-prod');
    planned = await monitor('planned-prod');
    backup = (await api('POST', '/heartbeats', { name: 'backup-job', project_id: ada.project_id })).body.data.id;
    const page = async (body: Record<string, unknown>) => {
      const res = await api('POST', '/status-pages', { project_id: ada.project_id, ...body });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.data.id as string;
    };
    grouped = await page({
      title: 'Customers',
      groups: [
        { name: 'Shop', components: [{ type: 'monitor', id: shop, display_name: 'Web shop' }] },
        { name: 'Jobs', components: [{ type: 'heartbeat', id: backup, display_name: 'Nightly backup' }] },
      ],
    });
    everything = await page({ title: 'Team', auto_publish_incidents: true });
    searchOnly = await page({ title: 'Search', groups: [{ name: 'Search', components: [{ type: 'monitor', id: search }] }] });
    await cp.db.sql`update monitors set status = 1`;
  });
  after(() => cp.stop());

  it('drafts one incident per page showing the monitor that went down, published at once where the page asks', async () => {
    const incident = randomUUID();
    await publish([monitorEvent('monitor.down', shop, 'shop-prod', '2026-11-20T10:00:00.000Z', incident)]);
    await drained();

    const [draft, ...more] = await incidentsOf(grouped);
    assert.equal(more.length, 0);
    assert.equal(draft!.title, 'Web shop is down', 'named as the page names it');
    assert.equal(draft!.impact, 'major');
    assert.equal(draft!.status, 'investigating');
    assert.equal(draft!.published, false, 'a draft on a page that does not publish drafts');
    assert.deepEqual(draft!.components, [{ type: 'monitor', id: shop, name: 'Web shop' }]);
    assert.deepEqual(draft!.source, { type: 'monitor', id: shop, monitor_incident_id: incident, ended_at: null });
    assert.deepEqual(
      draft!.updates.map((u) => [u.status, u.at, u.by]),
      [['investigating', '2026-11-20T10:00:00.000000Z', null]],
      'dated by the outage, posted by no one',
    );
    assert.equal(await level(grouped), 'operational', 'a draft does not raise the banner');

    const [published] = await incidentsOf(everything);
    assert.equal(published!.title, 'shop-prod is down', 'a page without groups uses the monitor’s own name');
    assert.equal(published!.published, true);
    assert.equal(published!.published_at, '2026-11-20T10:00:00.000000Z');
    assert.equal(await level(everything), 'partial_outage', 'a major published incident raises the banner');

    assert.deepEqual(await incidentsOf(searchOnly), [], 'a page not showing the monitor gets nothing');
  });

  it('changes nothing when the same down is delivered again (a replay under another message id, or the batch applied twice)', async () => {
    const incident = randomUUID();
    const down = monitorEvent('monitor.down', search, 'search-prod', '2026-11-20T11:00:00.000Z', incident);
    await publish([down]);
    await drained();
    const before = await rowCounts();
    const drafted = await incidentsOf(searchOnly);
    assert.equal(drafted.length, 1);

    await publish([down], '-replayed');
    await drained();
    assert.deepEqual(await rowCounts(), before, 'the replay drafted nothing more');

    // What a redelivery after a commit whose acknowledgement was lost does: the same batch again.
    const again = await cp.db.sql.begin((tx) => applyOutageEvents(tx, [down, down]));
    assert.deepEqual(again, { drafted: 0, resolved: 0, suggested: 0 });
    assert.deepEqual(await rowCounts(), before);
    assert.deepEqual(await incidentsOf(searchOnly), drafted);
  });

  it('resolves drafts and incidents published on their own when the outage ends, once, however often the up comes', async () => {
    const incident = randomUUID();
    await publish([monitorEvent('monitor.down', shop, 'shop-prod', '2026-11-20T12:00:00.000Z', incident)]);
    await drained();
    const up = monitorEvent('monitor.up', shop, 'shop-prod', '2026-11-20T12:07:30.000Z', incident, { duration_seconds: 450 });
    await publish([up]);
    await drained();

    for (const pageId of [grouped, everything]) {
      const i = (await incidentsOf(pageId)).find((x) => x.source?.monitor_incident_id === incident)!;
      assert.equal(i.status, 'resolved', pageId);
      assert.equal(i.resolved_at, '2026-11-20T12:07:30.000000Z', 'at the up’s own instant');
      assert.equal(i.source!.ended_at, '2026-11-20T12:07:30.000000Z');
      assert.deepEqual(
        i.updates.map((u) => [u.status, u.by]),
        [
          ['resolved', null],
          ['investigating', null],
        ],
      );
      assert.equal(i.suggested_update, null);
    }
    assert.match((await incidentsOf(grouped)).find((x) => x.source?.monitor_incident_id === incident)!.updates[0]!.message, /Web shop/);

    const before = await rowCounts();
    await publish([up], '-replayed');
    await drained();
    await cp.db.sql.begin((tx) => applyOutageEvents(tx, [up]));
    assert.deepEqual(await rowCounts(), before, 'no second resolved update');
  });

  it('leaves an incident a person published open when the outage ends, and suggests the resolved update', async () => {
    const incident = randomUUID();
    await publish([monitorEvent('monitor.down', shop, 'shop-prod', '2026-11-20T13:00:00.000Z', incident)]);
    await drained();
    const draft = (await incidentsOf(grouped)).find((x) => x.source?.monitor_incident_id === incident)!;
    const published = await api('PATCH', `/status-pages/${grouped}/incidents/${draft.id}`, { published: true });
    assert.equal(published.status, 200);
    assert.equal(await level(grouped), 'partial_outage');

    await publish([monitorEvent('monitor.up', shop, 'shop-prod', '2026-11-20T13:10:00.000Z', incident, { duration_seconds: 600 })]);
    await drained();
    const open = (await incidentsOf(grouped)).find((x) => x.id === draft.id)!;
    assert.equal(open.status, 'investigating', 'a person speaks for it: nothing is said over them');
    assert.equal(open.updates.length, 1);
    assert.equal(open.source!.ended_at, '2026-11-20T13:10:00.000000Z');
    assert.deepEqual(open.suggested_update, { status: 'resolved', message: 'Web shop is working again.' });

    const posted = await api('POST', `/status-pages/${grouped}/incidents/${draft.id}/updates`, open.suggested_update);
    assert.equal(posted.status, 201);
    assert.equal(posted.body.data.suggested_update, null, 'posted: nothing left to suggest');
    assert.equal(await level(grouped), 'operational');
  });

  it('drafts a heartbeat’s outage whose end was read before its start, resolved at once', async () => {
    const since = '2026-11-20T14:00:00.000Z';
    await publish([heartbeatEvent('heartbeat.up', '2026-11-20T14:30:00.000Z', since)]);
    await drained();
    assert.equal((await incidentsOf(grouped)).filter((i) => i.source?.type === 'heartbeat').length, 0);
    await publish([heartbeatEvent('heartbeat.down', since, since)]);
    await drained();
    const [i] = (await incidentsOf(grouped)).filter((x) => x.source?.type === 'heartbeat');
    assert.equal(i!.title, 'Nightly backup is down');
    assert.equal(i!.status, 'resolved');
    assert.equal(i!.resolved_at, '2026-11-20T14:30:00.000000Z');
    assert.deepEqual(
      i!.updates.map((u) => [u.status, u.at]),
      [
        ['resolved', '2026-11-20T14:30:00.000000Z'],
        ['investigating', '2026-11-20T14:00:00.000000Z'],
      ],
    );
    assert.deepEqual(i!.components, [{ type: 'heartbeat', id: backup, name: 'Nightly backup' }]);
  });

  it('does not draft an outage that began under maintenance, nor again one whose draft was deleted', async () => {
    // A window covers from its creation on: the down is dated inside it, after now.
    const start = Date.now();
    const window = await api('POST', '/maintenance-windows', {
      project_id: ada.project_id,
      name: 'Planned',
      starts_at: new Date(start - 60_000).toISOString(),
      ends_at: new Date(start + 3_600_000).toISOString(),
      monitor_ids: [planned],
    });
    assert.equal(window.status, 201, JSON.stringify(window.body));
    const before = await rowCounts();
    await publish([monitorEvent('monitor.down', planned, 'planned-prod', new Date(start + 60_000).toISOString(), randomUUID())]);
    await drained();
    assert.deepEqual(await rowCounts(), before, 'an outage during planned work is expected');

    const incident = randomUUID();
    const down = monitorEvent('monitor.down', planned, 'planned-prod', new Date(start + 7_200_000).toISOString(), incident);
    await publish([down]);
    await drained();
    const drafted = (await incidentsOf(everything)).find((x) => x.source?.monitor_incident_id === incident)!;
    assert.equal((await api('DELETE', `/status-pages/${everything}/incidents/${drafted.id}`)).status, 204);
    await publish([down], '-replayed');
    await drained();
    assert.equal(
      (await incidentsOf(everything)).find((x) => x.source?.monitor_incident_id === incident),
      undefined,
    );
  });

  it('goes on with the incident of a monitor that flaps (down again within 15 minutes), and drafts anew after that', async () => {
    const [first, second, third] = [randomUUID(), randomUUID(), randomUUID()];
    await publish([
      monitorEvent('monitor.down', search, 'search-prod', '2026-11-21T08:00:00.000Z', first),
      monitorEvent('monitor.up', search, 'search-prod', '2026-11-21T08:02:00.000Z', first, { duration_seconds: 120 }),
    ]);
    await drained();
    await publish([monitorEvent('monitor.down', search, 'search-prod', '2026-11-21T08:10:00.000Z', second)]);
    await drained();
    await publish([monitorEvent('monitor.up', search, 'search-prod', '2026-11-21T08:11:00.000Z', second, { duration_seconds: 60 })]);
    await drained();
    for (const pageId of [searchOnly, everything]) {
      const flapping = (await incidentsOf(pageId)).filter((x) => x.created_at >= '2026-11-21T08:00' && x.created_at < '2026-11-21T09:00');
      assert.equal(flapping.length, 1, `one incident for two outages 8 minutes apart on ${pageId}`);
      const i = flapping[0]!;
      assert.equal(i.status, 'resolved');
      assert.equal(i.source!.monitor_incident_id, second, 'it follows the latest outage');
      assert.deepEqual(
        i.updates.map((u) => [u.status, u.at, u.message.includes('again')]),
        [
          ['resolved', '2026-11-21T08:11:00.000000Z', true],
          ['investigating', '2026-11-21T08:10:00.000000Z', true],
          ['resolved', '2026-11-21T08:02:00.000000Z', true],
          ['investigating', '2026-11-21T08:00:00.000000Z', false],
        ],
      );
    }
    // Twenty minutes after the last end: a new incident.
    await publish([monitorEvent('monitor.down', search, 'search-prod', '2026-11-21T08:31:00.000Z', third)]);
    await drained();
    const later = (await incidentsOf(searchOnly)).filter((x) => x.created_at >= '2026-11-21T08:00' && x.created_at < '2026-11-21T09:00');
    assert.equal(later.length, 2);
    assert.equal(later.find((x) => x.source!.monitor_incident_id === third)!.status, 'investigating');
  });

  it('skips a down of a monitor deleted since, and goes on with the events after it', async () => {
    const gone = (await api('POST', '/monitors', { name: 'gone', url: 'https://gone.example', project_id: ada.project_id })).body.data.id;
    await api('DELETE', `/monitors/${gone}`);
    const incident = randomUUID();
    await publish([
      monitorEvent('monitor.down', gone, 'gone', '2026-11-20T17:00:00.000Z', randomUUID()),
      monitorEvent('monitor.down', search, 'search-prod', '2026-11-20T17:00:01.000Z', incident),
    ]);
    await drained();
    assert.ok((await incidentsOf(searchOnly)).some((x) => x.source?.monitor_incident_id === incident));
    const [row] = await cp.db.sql<{ n: number }[]>`
      select count(*)::int as n from status_page_incidents where source_key is not null and num_nonnulls(source_monitor_id, source_heartbeat_id) = 0`;
    assert.equal(row!.n, 0, 'nothing drafted for the deleted monitor');
  });

  it('drafts every outage of one batch on exactly the pages that show each, in its own project only', async () => {
    const bob = await createAccount(cp.db.sql);
    const bobApi = apiClient(cp.url, bob.token);
    const bobs = (await bobApi('POST', '/monitors', { name: 'api-prod', url: 'https://api.example', project_id: bob.project_id })).body.data
      .id;
    const bobsPage = (await bobApi('POST', '/status-pages', { project_id: bob.project_id, title: 'Bob' })).body.data.id as string;
    const at = '2026-11-25T10:00:00.000Z';
    const [shopDown, searchDown] = [randomUUID(), randomUUID()];
    const events: DomainEvent[] = [
      monitorEvent('monitor.down', shop, 'shop-prod', at, shopDown),
      monitorEvent('monitor.down', search, 'search-prod', at, searchDown),
      heartbeatEvent('heartbeat.down', at, at),
      {
        ...monitorEvent('monitor.down', bobs, 'api-prod', at, randomUUID()),
        project_id: bob.project_id,
      },
    ];
    const titles = async (pageId: string, call: Call = api) =>
      new Map(
        ((await call('GET', `/status-pages/${pageId}/incidents?per_page=100`)).body.data as { id: string; title: string }[]).map((x) => [
          x.id,
          x.title,
        ]),
      );
    const pages: [string, Call][] = [
      [grouped, api],
      [everything, api],
      [searchOnly, api],
      [bobsPage, bobApi],
    ];
    const before = await Promise.all(pages.map(([id, call]) => titles(id, call)));
    const outcome = await cp.db.sql.begin((tx) => applyOutageEvents(tx, events));
    assert.equal(outcome.drafted, 7, 'shop on 2 pages, search on 2, the backup on 2, bob’s monitor on his 1');
    const drafted = await Promise.all(
      pages.map(async ([id, call], i) =>
        [...(await titles(id, call))]
          .filter(([incident]) => !before[i]!.has(incident))
          .map(([, t]) => t)
          .sort(),
      ),
    );
    assert.deepEqual(drafted, [
      ['Nightly backup is down', 'Web shop is down'],
      ['backup-job is down', 'search-prod is down', 'shop-prod is down'],
      ['search-prod is down'],
      ['api-prod is down'],
    ]);
  });
});
