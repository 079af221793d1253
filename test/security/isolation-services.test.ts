import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Principal } from '../../control-plane/src/accounts/bearer.ts';
import { listTokens, revokeToken } from '../../control-plane/src/accounts/service.ts';
import * as history from '../../control-plane/src/monitors/history.ts';
import * as monitors from '../../control-plane/src/monitors/service.ts';
import { heartbeatTimeline } from '../../control-plane/src/heartbeats/timeline.ts';
import { heartbeatUptimeOver } from '../../control-plane/src/heartbeats/uptime.ts';
import { maintenanceSpans } from '../../control-plane/src/maintenance/service.ts';
import type { ApiContext } from '../../control-plane/src/platform/http/context.ts';
import { listMembers } from '../../control-plane/src/projects/members.ts';
import * as projects from '../../control-plane/src/projects/service.ts';
import * as badges from '../../control-plane/src/status-pages/badges.ts';
import * as incidents from '../../control-plane/src/status-pages/incidents/service.ts';
import * as statusPages from '../../control-plane/src/status-pages/service.ts';
import { createTestDatabase, type TestDatabase } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

/**
 * The services the dashboard and MCP call for projects, status pages, badges and tokens: each
 * refuses what belongs to another tenant, whatever id the caller passes (the front ends check
 * nothing of their own).
 */
const principalOf = (a: TestAccount): Principal => ({
  userId: a.user_id,
  tokenId: 'test',
  organizationIds: new Set([a.organization_id]),
  ownedOrganizationIds: new Set([a.organization_id]),
  projectIds: new Set([a.project_id]),
});

const refusedWith = (code: string) => (err: unknown) => (err as { code?: string }).code === code;

describe('tenancy of the projects, status pages, badge, token and history services', () => {
  let db: TestDatabase;
  let ctx: ApiContext;
  let owner: TestAccount;
  let other: TestAccount;
  let monitorId: string;
  let statusPageId: string;

  before(async () => {
    db = await createTestDatabase();
    ctx = { sql: db.sql, now: () => new Date(), config: { PUBLIC_URL: 'https://uptime.test' } } as unknown as ApiContext;
    [owner, other] = await Promise.all([createAccount(db.sql), createAccount(db.sql)]);
    const m = await monitors.createMonitor(ctx, principalOf(owner), {
      project_id: owner.project_id,
      name: 'Owned',
      url: 'https://example.test/',
      _method: 'GET',
      interval: 60,
      active: true,
      follow_redirects: true,
      tags: ['private-tag'],
    } as Parameters<typeof monitors.createMonitor>[2]);
    monitorId = m.id;
    await badges.createBadge(ctx, principalOf(owner), { monitorId });
    statusPageId = (
      await statusPages.createStatusPage(ctx, principalOf(owner), {
        project_id: owner.project_id,
        title: 'Owned',
        description: '',
        groups: [{ name: 'Site', components: [{ type: 'monitor', id: monitorId, description: '' }] }],
        auto_publish_incidents: false,
      })
    ).id;
  });
  after(() => db.drop());

  it("refuses another tenant's status pages, in every verb", async () => {
    const p = principalOf(other);
    const page = { page: 1, per_page: 10 };
    await assert.rejects(statusPages.listStatusPages(ctx, p, owner.project_id, page), refusedWith('FORBIDDEN'));
    await assert.rejects(statusPages.projectStatusPages(ctx, p, owner.project_id), refusedWith('FORBIDDEN'));
    await assert.rejects(statusPages.getStatusPage(ctx, p, statusPageId), refusedWith('NOT_FOUND'));
    await assert.rejects(statusPages.updateStatusPage(ctx, p, statusPageId, { title: 'taken' }), refusedWith('NOT_FOUND'));
    await assert.rejects(statusPages.changeStatusPageAddress(ctx, p, statusPageId), refusedWith('NOT_FOUND'));
    await assert.rejects(statusPages.deleteStatusPage(ctx, p, statusPageId), refusedWith('NOT_FOUND'));
    await assert.rejects(
      statusPages.createStatusPage(ctx, p, {
        project_id: owner.project_id,
        title: 'Inside',
        description: '',
        groups: [],
        auto_publish_incidents: false,
      }),
      refusedWith('FORBIDDEN'),
    );
    // The owner's monitor, put on a page of one's own project, is refused as not of that project.
    await assert.rejects(
      statusPages.createStatusPage(ctx, p, {
        project_id: other.project_id,
        title: 'Mine',
        description: '',
        groups: [{ name: 'Theirs', components: [{ type: 'monitor', id: monitorId, description: '' }] }],
        auto_publish_incidents: false,
      }),
      (err: unknown) =>
        refusedWith('VALIDATION')(err) && Object.keys((err as { errors: object }).errors).join() === 'groups.0.components.0.id',
    );
    assert.deepEqual((await statusPages.listStatusPages(ctx, p, undefined, page)).total, 0);
    const mine = await statusPages.getStatusPage(ctx, principalOf(owner), statusPageId);
    assert.equal(mine.title, 'Owned', 'the page is unchanged');
    assert.equal(mine.groups[0]!.components[0]!.id, monitorId);
  });

  it("refuses another tenant's status page incidents, in every verb", async () => {
    const mine = await incidents.createIncident(ctx, principalOf(owner), statusPageId, {
      title: 'Owned incident',
      impact: 'minor',
      status: 'investigating',
      message: 'x',
      components: [],
      published: false,
    });
    const p = principalOf(other);
    const refused = refusedWith('NOT_FOUND');
    await assert.rejects(incidents.listIncidents(ctx, p, statusPageId, {}, { page: 1, per_page: 10 }), refused);
    await assert.rejects(incidents.getIncident(ctx, p, statusPageId, mine.id), refused);
    await assert.rejects(
      incidents.createIncident(ctx, p, statusPageId, {
        title: 'Inside',
        impact: 'minor',
        status: 'investigating',
        message: 'x',
        components: [],
        published: true,
      }),
      refused,
    );
    await assert.rejects(incidents.updateIncident(ctx, p, statusPageId, mine.id, { published: true }), refused);
    await assert.rejects(incidents.postIncidentUpdate(ctx, p, statusPageId, mine.id, { status: 'resolved', message: 'x' }), refused);
    await assert.rejects(incidents.deleteIncident(ctx, p, statusPageId, mine.id), refused);
    const after = await incidents.getIncident(ctx, principalOf(owner), statusPageId, mine.id);
    assert.deepEqual(after, mine, 'unchanged');
  });

  it("does not show, make or remove the badge of another tenant's monitor", async () => {
    const p = principalOf(other);
    assert.equal(await badges.badgeSlug(ctx, p, { monitorId }), null);
    await assert.rejects(badges.createBadge(ctx, p, { monitorId }), refusedWith('NOT_FOUND'));
    await assert.rejects(badges.deleteBadge(ctx, p, { monitorId }), refusedWith('NOT_FOUND'));
    const slug = await badges.badgeSlug(ctx, principalOf(owner), { monitorId });
    assert.ok(slug, 'the owner still has the badge');
    assert.deepEqual(await badges.findBadge(ctx, slug), { monitor_id: monitorId, heartbeat_id: null, project_id: owner.project_id });
  });

  it("neither reads, lists, changes nor deletes another tenant's project", async () => {
    const p = principalOf(other);
    await assert.rejects(projects.getProject(db.sql, p, owner.project_id), refusedWith('NOT_FOUND'));
    await assert.rejects(projects.updateProject(db.sql, p, owner.project_id, { name: 'taken' }), refusedWith('NOT_FOUND'));
    await assert.rejects(projects.deleteProject(db.sql, p, owner.project_id), refusedWith('NOT_FOUND'));
    await assert.rejects(projects.listProjects(db.sql, p, owner.organization_id, { page: 1, per_page: 10 }), refusedWith('FORBIDDEN'));
    await assert.rejects(
      projects.createProject(db.sql, p, { organization_id: owner.organization_id, name: 'Inside', description: '' }),
      refusedWith('FORBIDDEN'),
    );
    const { items } = await projects.listProjects(db.sql, p, undefined, { page: 1, per_page: 10 });
    assert.deepEqual(
      items.map((i) => i.id),
      [other.project_id],
    );
    await assert.rejects(listMembers(db.sql, p, owner.organization_id), refusedWith('FORBIDDEN'));
    assert.equal((await projects.getProject(db.sql, principalOf(owner), owner.project_id)).name, 'Default');
  });

  it('reads no monitor list, tags, uptime, incidents, chart span or heartbeat log of another tenant', async () => {
    const p = principalOf(other);
    const page = { page: 1, per_page: 10 };
    await assert.rejects(monitors.searchMonitors(ctx, p, owner.project_id, { sort: 'name' }, page), refusedWith('FORBIDDEN'));
    await assert.rejects(monitors.projectTags(ctx, p, owner.project_id), refusedWith('FORBIDDEN'));
    await assert.rejects(history.projectUptimeWindows(ctx, p, owner.project_id, [monitorId]), refusedWith('FORBIDDEN'));
    await assert.rejects(history.projectRecentIncidents(ctx, p, owner.project_id, [monitorId], 90), refusedWith('FORBIDDEN'));
    await assert.rejects(history.monitorRecentSpan(ctx, p, monitorId), refusedWith('NOT_FOUND'));
    // Ids of another project's monitors, asked for within one's own project, give nothing.
    assert.equal((await history.projectUptimeWindows(ctx, p, other.project_id, [monitorId])).size, 0);
    assert.deepEqual(await history.projectRecentIncidents(ctx, p, other.project_id, [monitorId], 90), []);
    assert.deepEqual(await monitors.projectTags(ctx, p, other.project_id), []);
    assert.equal((await monitors.listMonitors(ctx, p, undefined, page, { tag: 'private-tag' })).total, 0);
    const [hb] = await db.sql<{ id: string }[]>`
      insert into heartbeats (project_id, name, grace_period) values (${owner.project_id}, 'Owned', 60) returning id`;
    await assert.rejects(heartbeatTimeline(ctx, p, hb!.id, 10), refusedWith('NOT_FOUND'));
    assert.deepEqual(await heartbeatTimeline(ctx, principalOf(owner), hb!.id, 10), []);
    // What badges read: uptime and response time over a window, maintenance spans.
    await assert.rejects(history.monitorUptimeOver(ctx, p, owner.project_id, monitorId, 86_400), refusedWith('FORBIDDEN'));
    await assert.rejects(history.monitorUptimeOver(ctx, p, other.project_id, monitorId, 86_400), refusedWith('NOT_FOUND'));
    await assert.rejects(history.monitorResponseTime(ctx, p, monitorId, 86_400, 'p95'), refusedWith('NOT_FOUND'));
    await assert.rejects(heartbeatUptimeOver(ctx, p, owner.project_id, hb!.id, 86_400), refusedWith('FORBIDDEN'));
    await assert.rejects(heartbeatUptimeOver(ctx, p, other.project_id, hb!.id, 86_400), refusedWith('NOT_FOUND'));
    const span = [new Date(Date.now() - 86_400_000), new Date()] as const;
    await assert.rejects(maintenanceSpans(ctx, p, owner.project_id, { type: 'monitor', id: monitorId }, ...span), refusedWith('FORBIDDEN'));
    assert.equal(await heartbeatUptimeOver(ctx, principalOf(owner), owner.project_id, hb!.id, 86_400), 100);
    assert.deepEqual(await monitors.projectTags(ctx, principalOf(owner), owner.project_id), ['private-tag']);
  });

  it("does not revoke another user's token by its id", async () => {
    const [token] = await listTokens(db.sql, owner.user_id, 'api');
    await assert.rejects(revokeToken(db.sql, other.user_id, token!.id, 'api'), refusedWith('NOT_FOUND'));
    assert.deepEqual(
      (await listTokens(db.sql, owner.user_id, 'api')).map((t) => t.id),
      [token!.id],
    );
  });
});
