import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEPLOYMENT_PROJECT_ID, DomainEvent } from '../../shared/src/contracts/events.ts';
import type { RunningAgent } from '../../probe-agent/src/agent.ts';
import { regionSubjectId } from '../../control-plane/src/monitors/regions/events.ts';
import { apiClient, assertInvalid, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startTarget, type Target } from '../harness/http.ts';
import { agentConfig, runAgent } from '../probe-agent/agent-helpers.ts';
import { webClient } from '../web/client.ts';

/** Region events, in the order published, and a wait for the next one of a kind. */
function watchRegionEvents(cp: TestControlPlane) {
  const seen: DomainEvent[] = [];
  let waiters: { kind: string; resolve: (e: DomainEvent) => void }[] = [];
  const sub = cp.nats.nc.subscribe(`${cp.nats.namespace}.events.${DEPLOYMENT_PROJECT_ID}.region.>`, {
    callback: (_err, m) => {
      const e = DomainEvent.parse(m.json());
      seen.push(e);
      waiters = waiters.filter((w) => (w.kind === e.kind ? (w.resolve(e), false) : true));
    },
  });
  return {
    seen,
    next: (kind: string) => new Promise<DomainEvent>((resolve) => waiters.push({ kind, resolve })),
    stop: () => sub.unsubscribe(),
  };
}

describe('probe regions: quorum settings and region health', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let canary: Target;
  let agent: RunningAgent | undefined;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api', 'assign', 'ingest'], regionHealthPeriodMs: 100 });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    canary = await startTarget({ status: 404 });
  });
  after(async () => {
    await agent?.stop();
    await canary.close();
    await cp.stop();
  });

  it('takes a quorum and rounds of confirmation, with defaults that keep a majority and one round', async () => {
    const plain = await api('POST', '/monitors', { name: 'a', url: 'https://a.example/', project_id: ada.project_id });
    assert.equal(plain.status, 201);
    assert.equal(plain.body.data.quorum, null);
    assert.equal(plain.body.data.confirm_down, 1);
    assert.equal(plain.body.data.confirm_up, 1);
    const set = await api('POST', '/monitors', {
      name: 'b',
      url: 'https://b.example/',
      project_id: ada.project_id,
      regions: ['eu', 'us', 'ap'],
      quorum: 2,
      confirm_down: 3,
      confirm_up: 2,
    });
    assert.equal(set.status, 201);
    assert.deepEqual([set.body.data.quorum, set.body.data.confirm_down, set.body.data.confirm_up], [2, 3, 2]);
    const changed = await api('PUT', `/monitors/${set.body.data.id}`, { quorum: null, confirm_up: 1 });
    assert.equal(changed.status, 200);
    assert.deepEqual([changed.body.data.quorum, changed.body.data.confirm_down, changed.body.data.confirm_up], [null, 3, 1]);
  });

  it('names the field of a quorum or confirmation out of bounds', async () => {
    const base = { name: 'c', url: 'https://c.example/', project_id: ada.project_id };
    assertInvalid(await api('POST', '/monitors', { ...base, regions: ['eu', 'us'], quorum: 3 }), ['quorum']);
    assertInvalid(await api('POST', '/monitors', { ...base, quorum: 0 }), ['quorum']);
    assertInvalid(await api('POST', '/monitors', { ...base, confirm_down: 11 }), ['confirm_down']);
    assertInvalid(await api('POST', '/monitors', { ...base, confirm_up: 0 }), ['confirm_up']);
    assertInvalid(await api('POST', '/monitors', { ...base, quorum: 'two' }), ['quorum']);
    const m = await api('POST', '/monitors', { ...base, regions: ['eu', 'us', 'ap'], quorum: 3 });
    assert.equal(m.status, 201);
    // Fewer regions than the stored quorum: refused on the quorum, whichever field changed.
    assertInvalid(await api('PUT', `/monitors/${m.body.data.id}`, { regions: ['eu'] }), ['quorum']);
  });

  it('degrades a region whose agent cannot reach its canaries, once, and recovers it when they answer', async () => {
    const events = watchRegionEvents(cp);
    try {
      agent = await runAgent({
        config: agentConfig(cp.nats.namespace, {
          CANARY_URLS: `${canary.url}/edge`,
          CANARY_INTERVAL: '5',
          CHECK_SOURCE_ADDRESS: '127.0.0.2',
        }),
        nc: cp.nats.nc,
        region: 'edge',
      });
      // A 404 from the canary is an answer: the agent's network works.
      await canary.waitForRequests(1);

      const degraded = events.next('region.degraded');
      canary.cut('127.0.0.2');
      const down = await degraded;
      assert.equal(down.subject.type, 'region');
      assert.equal(down.subject.name, 'edge');
      assert.equal(down.subject.id, regionSubjectId('edge'));
      assert.equal(down.project_id, DEPLOYMENT_PROJECT_ID);
      assert.equal(down.data.reason, 'canaries');
      assert.equal(down.data.canary_agents, 1);
      assert.equal(down.data.canary_agents_failing, 1);
      const listed = (await api('GET', '/regions')).body.data.find((r: { region: string }) => r.region === 'edge');
      assert.deepEqual([listed.state, listed.reason, listed.agents], ['degraded', 'canaries', 1]);
      // The dashboard says so above the monitors' statuses.
      const web = webClient(cp.url);
      await web.signIn(ada.email, ada.password);
      const page = await web.get('/app/monitors');
      assert.match(page.text, /Probe region <strong>edge<\/strong> is degraded[^<]*:\s+its probe agents cannot reach their canaries/);

      const recovered = events.next('region.recovered');
      canary.heal('127.0.0.2');
      const up = await recovered;
      assert.equal(up.data.reason, 'canaries');
      assert.equal(typeof up.data.duration_seconds, 'number');
      assert.deepEqual(
        events.seen.map((e) => e.kind),
        ['region.degraded', 'region.recovered'],
      );
      const [row] = await cp.db.sql<{ n: number }[]>`select count(*)::int as n from outbox_events where kind like 'region.%'`;
      assert.equal(row!.n, 2);
    } finally {
      events.stop();
    }
  });
});
