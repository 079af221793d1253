import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient } from '../harness/api.ts';
import { startWebhookSink, type Target } from '../harness/http.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { openBrowser, sidewaysOverflow, type Browser } from './chromium.ts';
import { seedProject, type SeededProject } from './project-seed.ts';

/**
 * Every page of the dashboard at the width of a small phone, signed in over a project with data
 * in it: none may scroll sideways (a table may, inside its card). Each is kept as a screenshot in
 * test-artifacts/web/phone-*.png to look at.
 */
describe('the dashboard on a phone (375 px)', () => {
  let cp: TestControlPlane;
  let sink: Target;
  let ada: TestAccount;
  let seeded: SeededProject;
  let browser: Browser;
  let statusPage: string;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api', 'deadline'], env: { ALLOW_SIGNUP: 'true' } });
    sink = await startWebhookSink();
    ada = await createAccount(cp.db.sql, { email: 'ada.lovelace@example.test' });
    await createAccount(cp.db.sql, { email: 'grace.hopper@example.test' });
    seeded = await seedProject(cp, ada, `${sink.url}/hook`);
    browser = await openBrowser({ width: 375, height: 812 });
  });

  after(async () => {
    await browser?.close();
    await sink?.close();
    await cp?.stop();
  });

  /** Where `path` scrolls sideways, and by how much; nothing when it fits. */
  async function overflowOf(path: string, name: string): Promise<string[]> {
    const { page } = browser;
    const res = await page.goto(cp.url + path);
    assert.equal(res?.status(), 200, `${path}: ${res?.status()}`);
    await browser.shot(`phone-${name}`);
    const overflow = await sidewaysOverflow(page);
    return overflow > 0 ? [`${path} scrolls sideways by ${overflow}px`] : [];
  }

  it('fits the signed-out pages', async () => {
    assert.deepEqual([...(await overflowOf('/app/sign-in', 'sign-in')), ...(await overflowOf('/app/sign-up', 'sign-up'))], []);
  });

  it('fits every signed-in page, with data on each', async () => {
    const { page } = browser;
    await page.goto(`${cp.url}/app/sign-in`);
    await page.fill('input[name=email]', ada.email);
    await page.fill('input[name=password]', ada.password);
    await Promise.all([page.waitForURL(`${cp.url}/`), page.click('button[type=submit]')]);
    // Data only a person makes: a member, a token, the status page.
    await page.goto(`${cp.url}/app/settings/members`);
    await Promise.all([
      page.waitForURL(/members/),
      page.fill('input[name=email]', 'grace.hopper@example.test'),
      page.click('button:has-text("Add member")'),
    ]);
    await page.goto(`${cp.url}/app/settings/tokens`);
    await page.fill('input[name=name]', 'deploy pipeline of the storefront');
    await page.click('button:has-text("Create token")');
    await browser.shot('phone-token-created');
    assert.ok((await sidewaysOverflow(page)) <= 0, 'the new token fits');
    // A status page with groups, made in the form as a person would on a phone.
    await page.goto(`${cp.url}/app/status-pages/new`);
    await page.fill('input[name="groups.0.name"]', 'Customer-facing services of the storefront');
    await page.selectOption('select[name="groups.0.components.0.subject"]', `monitor:${seeded.checkout.id}`);
    await page.fill('input[name="groups.0.components.0.display_name"]', 'Checkout and payment, every region');
    await page.click('button:has-text("Add a component")');
    await page.selectOption('select[name="groups.0.components.1.subject"]', `monitor:${seeded.search.id}`);
    await page.click('button:has-text("Add a group")');
    await page.fill('input[name="groups.1.name"]', 'Jobs');
    await page.selectOption('select[name="groups.1.components.0.subject"]', `heartbeat:${seeded.backup.id}`);
    await browser.shot('phone-status-page-new-filled');
    assert.ok((await sidewaysOverflow(page)) <= 0, 'the filled form fits');
    await Promise.all([page.waitForURL(/\/app\/status-pages#p-/), page.click('button:has-text("Create status page")')]);
    statusPage = new URL((await page.getAttribute('[data-testid=open-status-page]', 'href'))!, cp.url).pathname;
    const statusPageId = (await page.getAttribute('[data-status-page]', 'data-status-page'))!;
    // Maintenance: one running on the down monitor, one ahead of the heartbeat, a recurring one.
    const api = apiClient(cp.url, ada.token);
    const hour = 3_600_000;
    const windows = [
      {
        name: 'Load balancer swap in the European region',
        description: 'Search may answer slowly while traffic moves to the new load balancer.',
        starts_at: new Date(Date.now() - hour).toISOString(),
        ends_at: new Date(Date.now() + hour).toISOString(),
        monitor_ids: [seeded.search.id, seeded.checkout.id],
      },
      {
        name: 'Backup host move',
        starts_at: new Date(Date.now() + 30 * hour).toISOString(),
        ends_at: new Date(Date.now() + 32 * hour).toISOString(),
        heartbeat_ids: [seeded.backup.id],
        timezone: 'America/Argentina/Buenos_Aires',
      },
      { name: 'Sunday patching', cron: '0 3 * * 0', duration_seconds: 7200, timezone: 'Europe/Berlin', whole_project: true },
    ];
    const created: string[] = [];
    for (const w of windows) created.push((await api('POST', '/maintenance-windows', { project_id: ada.project_id, ...w })).body.data.id);

    const pages: [string, string][] = [
      ['/', 'overview'],
      ['/app/monitors', 'monitors'],
      ['/app/monitors?status=down&tag=prod&sort=name', 'monitors-filtered'],
      ['/app/monitors/new', 'monitor-new'],
      [`/app/monitors/${seeded.checkout.id}`, 'monitor'],
      [`/app/monitors/${seeded.search.id}`, 'monitor-down'],
      [`/app/monitors/${seeded.checkout.id}/edit`, 'monitor-edit'],
      ['/app/heartbeats', 'heartbeats'],
      ['/app/heartbeats/new', 'heartbeat-new'],
      [`/app/heartbeats/${seeded.backup.id}`, 'heartbeat'],
      [`/app/heartbeats/${seeded.backup.id}/edit`, 'heartbeat-edit'],
      [`/app/heartbeats/${seeded.exportJob.id}`, 'heartbeat-rules'],
      [`/app/heartbeats/${seeded.exportJob.id}/edit`, 'heartbeat-rules-edit'],
      ['/app/maintenance', 'maintenance'],
      ['/app/maintenance/new', 'maintenance-new'],
      [`/app/maintenance/${created[0]}/edit`, 'maintenance-edit'],
      ['/app/status-pages', 'status-pages'],
      ['/app/status-pages/new', 'status-page-new'],
      [`/app/status-pages/${statusPageId}/edit`, 'status-page-edit'],
      ['/app/triggers', 'triggers'],
      ['/app/triggers/new', 'trigger-new'],
      [`/app/triggers/${seeded.trigger.id}`, 'trigger'],
      ['/app/integrations', 'integrations'],
      ['/app/integrations/new', 'integration-types'],
      ['/app/integrations/new?type=webhook', 'integration-new'],
      [`/app/integrations/${seeded.integration.id}`, 'integration'],
      ['/app/settings/tokens', 'tokens'],
      ['/app/settings/members', 'members'],
      ['/app/settings/project', 'project'],
      [statusPage, 'status-page'],
    ];
    const overflows: string[] = [];
    for (const [path, name] of pages) overflows.push(...(await overflowOf(path, name)));
    assert.deepEqual(overflows, []);
    // The body of the failed run opens under its ping, and fits too.
    await page.goto(`${cp.url}/app/heartbeats/${seeded.backup.id}`);
    await page.click('.ping-body summary');
    await browser.shot('phone-heartbeat-body');
    assert.ok((await sidewaysOverflow(page)) <= 0, 'an open ping body fits');
  });
});
