import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { apiClient, type Call } from '../harness/api.ts';
import { startWebhookSink, type Target } from '../harness/http.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { openBrowser, type Browser } from './chromium.ts';
import { seedProject, type SeededProject } from './project-seed.ts';
import { seedResults } from './seed.ts';
import { dayGrade } from '../../control-plane/src/web/bars.ts';

/**
 * What the dashboard shows at a glance, in a browser: the monitors list's check bars, uptimes,
 * filters and order; a new monitor's chart; the status page's days; a heartbeat's event log.
 */
describe('the dashboard at a glance', () => {
  let cp: TestControlPlane;
  let sink: Target;
  let ada: TestAccount;
  let api: Call;
  let seeded: SeededProject;
  let browser: Browser;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api', 'deadline'] });
    sink = await startWebhookSink();
    ada = await createAccount(cp.db.sql, { email: 'ada.lovelace@example.test' });
    api = apiClient(cp.url, ada.token);
    seeded = await seedProject(cp, ada, `${sink.url}/hook`);
    browser = await openBrowser();
    const { page } = browser;
    await page.goto(`${cp.url}/app/sign-in`);
    await page.fill('input[name=email]', ada.email);
    await page.fill('input[name=password]', ada.password);
    await Promise.all([page.waitForURL(`${cp.url}/`), page.click('button[type=submit]')]);
  });
  beforeEach(() => browser.page.setViewportSize({ width: 1280, height: 860 }));
  after(async () => {
    await browser?.close();
    await sink?.close();
    await cp?.stop();
  });

  /** The names of the monitors the list shows, top to bottom. */
  const listed = () => browser.page.$$eval('tr[data-monitor] td.name > a', (as) => as.map((a) => a.textContent!.trim()));
  const tip = async () => (await browser.page.waitForSelector('.tip:not([hidden])')).textContent();

  it("shows each monitor's latest checks as coloured bars, with when and how fast on hover, and its uptime over 24 h, 7 d and 30 d", async () => {
    const { page } = browser;
    await page.goto(`${cp.url}/app/monitors`);
    const row = `tr[data-monitor="${seeded.checkout.id}"]`;
    assert.equal(await page.locator(`${row} svg.beats rect`).count(), 40);
    assert.ok((await page.locator(`${row} svg.beats rect.up`).count()) >= 35);
    assert.equal(await page.locator(`${row} svg.beats rect.down`).count(), 1, 'the slot where both regions failed');
    assert.equal(await page.locator(`tr[data-monitor="${seeded.docs.id}"] svg.beats rect:not([class])`).count(), 40, 'grey: never checked');

    await page.hover(`${row} svg.beats rect.up >> nth=-1`);
    assert.match((await tip())!, /^\d{4}-\d\d-\d\d \d\d:\d\d UTC · \d+ ms · up$/);
    await page.hover(`${row} svg.beats rect.down`);
    assert.match((await tip())!, / UTC · down: 2 of 2 regions failed$/);
    await browser.shot('glance-01-bars-tip', page, { fullPage: false });

    const monitor = (await api('GET', `/monitors/${seeded.checkout.id}`)).body.data;
    const cell = (window: string) => page.textContent(`${row} td[data-window="${window}"]`).then((t) => t!.trim());
    assert.equal(await cell('24h'), '99.51%', '7 minutes down in the last day');
    assert.equal(await cell('7d'), '99.93%');
    assert.equal(await cell('30d'), `${monitor.uptime.toFixed(2)}%`, "the 30 days are the monitor's uptime");
  });

  it('filters the list by status, name and tag, and sorts it, from the address so a reload keeps them', async () => {
    const { page } = browser;
    await page.goto(`${cp.url}/app/monitors`);
    assert.deepEqual(await listed(), [
      'Search service of the storefront in the European region, behind the new load balancer',
      'Checkout API',
      'Docs',
    ]);
    await Promise.all([page.waitForURL(/status=down/), page.selectOption('select[name=status]', 'down')]);
    assert.deepEqual(await listed(), ['Search service of the storefront in the European region, behind the new load balancer']);
    await Promise.all([page.waitForURL(/status=up/), page.selectOption('select[name=status]', 'up')]);
    assert.deepEqual(await listed(), ['Checkout API']);
    await Promise.all([page.waitForURL(/status=paused/), page.selectOption('select[name=status]', 'paused')]);
    assert.deepEqual(await listed(), ['Docs']);
    await Promise.all([page.waitForURL(/status=(&|$)/), page.selectOption('select[name=status]', '')]);

    await page.fill('input[name=q]', 'CHECK');
    await Promise.all([page.waitForURL(/q=CHECK/), page.press('input[name=q]', 'Enter')]);
    assert.deepEqual(await listed(), ['Checkout API']);
    await page.fill('input[name=q]', '');

    assert.deepEqual(await page.$$eval('select[name=tag] option', (os) => os.map((o) => o.textContent)), [
      'Any tag',
      'checkout',
      'eu west',
      'prod',
      'search',
      'staging',
    ]);
    await Promise.all([page.waitForURL(/tag=prod/), page.selectOption('select[name=tag]', 'prod')]);
    assert.deepEqual(await listed(), [
      'Search service of the storefront in the European region, behind the new load balancer',
      'Checkout API',
    ]);
    await Promise.all([page.waitForURL(/sort=name/), page.selectOption('select[name=sort]', 'name')]);
    assert.deepEqual(await listed(), [
      'Checkout API',
      'Search service of the storefront in the European region, behind the new load balancer',
    ]);
    await page.reload();
    assert.deepEqual(await listed(), [
      'Checkout API',
      'Search service of the storefront in the European region, behind the new load balancer',
    ]);
    assert.match((await page.getAttribute('[data-live]', 'data-live'))!, /tag=prod.*sort=name/, 'the live refresh keeps the filters');

    await Promise.all([page.waitForURL(/tag=eu\+west/), page.click(`tr[data-monitor="${seeded.search.id}"] a.tag:has-text("eu west")`)]);
    assert.deepEqual(await listed(), ['Search service of the storefront in the European region, behind the new load balancer']);
    await browser.shot('glance-02-filtered');
  });

  it("opens a new monitor's chart on its last hour, an older one's on its last day", async () => {
    const { page } = browser;
    const fresh = (await api('POST', '/monitors', { name: 'Fresh', url: 'https://fresh.example.test/', project_id: ada.project_id })).body
      .data;
    await seedResults(cp.db.sql, fresh.id, { hours: 0.5, stepMinutes: 1 });
    await page.goto(`${cp.url}/app/monitors/${fresh.id}`);
    assert.equal(await page.textContent('.range-tabs a[aria-current]'), '1h');
    assert.ok((await page.locator('svg.chart-wide polyline').count()) > 0, 'the hour has data');
    assert.match((await page.getAttribute('[data-live]', 'data-live'))!, /range=1h/, 'and keeps it while it refreshes');
    await browser.shot('glance-03-new-monitor-chart');

    await page.goto(`${cp.url}/app/monitors/${seeded.checkout.id}`);
    assert.equal(await page.textContent('.range-tabs a[aria-current]'), '24h');
    await page.click('.range-tabs a:has-text("1h")');
    assert.equal(await page.textContent('.range-tabs a[aria-current]'), '1h');
  });

  it('colours the status page days by their uptime, graded, with the figure and the incidents of a day on hover', async () => {
    const { page } = browser;
    await page.goto(`${cp.url}/app/status-pages/new`);
    await Promise.all([page.waitForURL(/\/app\/status-pages#p-/), page.click('button:has-text("Create status page")')]);
    const href = (await page.getAttribute('[data-testid=open-status-page]', 'href'))!;
    const visitor = await browser.context.newPage();
    try {
      await visitor.goto(new URL(href, cp.url).href);
      const bars = visitor.locator('.component:has-text("Checkout API") svg.bars > *');
      assert.equal(await bars.count(), 90);
      const classes = await bars.evaluateAll((els) => els.map((e) => e.getAttribute('class') ?? ''));
      // Incidents 12 days ago (2 h: 91.7 %) and 33 days ago (10 h: red for its share only).
      assert.equal(classes[89 - 12], 'b-poor');
      assert.ok(classes.slice(89 - 34, 89 - 31).includes('b-bad'), classes.slice(89 - 34, 89 - 31).join());
      // Today counts the part of the day gone by: the 7 minutes of 3 hours ago weigh more early in a
      // UTC day (and lie in yesterday before 03:00), so the expected colour follows the clock.
      const now = Date.now();
      const midnight = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate());
      const start = now - 3 * 3_600_000;
      const todayDown = Math.max(0, Math.min(start + 420_000, now) - Math.max(start, midnight));
      assert.equal(classes[89], dayGrade(100 * (1 - todayDown / (now - midnight))));
      assert.equal(classes.filter((c) => c === 'b-ok').length >= 50, true);
      assert.equal(classes[0], '', 'before the monitor existed: no data');

      const red = visitor.locator('.component:has-text("Checkout API") svg.bars > g.b-bad').first();
      const down = Number(await red.locator('.day-down').getAttribute('height'));
      assert.ok(down > 2 && down < 34, `a partly red bar (${down} of 34)`);

      await visitor
        .locator('.component:has-text("Checkout API") svg.bars > *')
        .nth(89 - 12)
        .hover();
      const twelve = (await (await visitor.waitForSelector('.tip:not([hidden])')).textContent())!;
      assert.match(
        twelve,
        /^\d{4}-\d\d-\d\d: 91\.6\d% uptime\nDown from (\d\d:\d\d UTC|\d{4}-\d\d-\d\d \d\d:\d\d UTC) for 2 h: error responses$/,
      );
      await browser.shot('glance-04-status-day-tip', visitor, { fullPage: false });
      const page33 = await visitor.content();
      for (const secret of ['db.internal', 'ENOTFOUND', 'Unexpected status', 'Timed out', 'shop.example.test', 'search.eu-west']) {
        assert.ok(!page33.includes(secret), `the status page shows no ${secret}`);
      }
      assert.match(page33, /name not resolving/);
    } finally {
      await visitor.close();
    }
  });

  it("shows a heartbeat's pings and status changes as one log, with run times, exit codes and the body", async () => {
    const { page } = browser;
    await page.goto(`${cp.url}/app/heartbeats/${seeded.backup.id}`);
    const events = await page.$$eval('table.events tr.event', (rows) => rows.map((r) => r.getAttribute('data-event')));
    assert.deepEqual(events, ['up', 'success', 'down', 'fail', 'start', 'success', 'start']);
    const text = (n: number) => page.textContent(`table.events tr.event >> nth=${n}`).then((t) => t!.replace(/\s+/g, ' ').trim());
    assert.match(await text(0), /A success ping: up again/);
    assert.match(await text(2), /The job reported a failure/);
    assert.match(await text(3), /Fail \(exit 3\) ran \d+ ms POST from 127\.0\.0\.1/);
    assert.match(await text(5), /Success ran \d+ ms GET/);
    assert.doesNotMatch(await text(1), /ran/, 'a success without a start before it has no run time');
    assert.equal(await page.isVisible('.ping-body pre'), false);
    await page.click('.ping-body summary');
    assert.match((await page.textContent('.ping-body pre'))!, /pg_dump: error: connection to server/);
    // The log refreshes itself ("5 seconds ago" becomes "10 seconds ago"); the body stays open.
    await page.waitForSelector('[data-live][data-live-updated]', { timeout: 15_000 });
    assert.equal(await page.isVisible('.ping-body pre'), true, 'still open after a refresh');
    assert.match((await page.textContent('.ping-body summary'))!, /Body, 357 B/);
    await browser.shot('glance-05-heartbeat-log');
    assert.deepEqual(browser.cspErrors, []);
  });
});
