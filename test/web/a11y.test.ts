import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import axe from 'axe-core';
import type { Page } from 'playwright-core';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { openBrowser, sidewaysOverflow, type Browser } from './chromium.ts';
import { backdate, markChecked, seedIncident, seedResults } from './seed.ts';

/** What axe reports of one rule broken on a page. */
interface Violation {
  id: string;
  impact: 'minor' | 'moderate' | 'serious' | 'critical' | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

const H = 3_600_000;

/**
 * axe-core, the accessibility engine, run in Chromium over the public status page (with groups,
 * bars, maintenance and an incident) and the dashboard's status pages list and forms. Every
 * violation is printed; a serious or critical one fails the test. The public page is also read at
 * the width of a small phone, where it must not scroll sideways.
 */
describe('accessibility of the status pages', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let browser: Browser;
  let page: Page;
  let statusPage: { id: string; slug: string };
  let shopId: string;
  let incidentId: string;

  /** axe's violations on the page open now (axe evaluated through the debugging protocol, which the page's CSP does not cover). */
  async function violationsOf(name: string): Promise<Violation[]> {
    await page.evaluate(axe.source);
    const violations = await page.evaluate<Violation[]>(`
      axe.run(document, { resultTypes: ['violations'] }).then((r) =>
        r.violations.map((v) => ({
          id: v.id,
          impact: v.impact,
          help: v.help,
          nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
        })),
      )`);
    for (const v of violations) {
      console.log(`${name}: ${v.impact} ${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    }
    await browser.shot(`a11y-${name}`);
    return violations;
  }

  /** The serious and critical violations of a page, as lines to read in a failed assertion. */
  const blocking = (name: string, violations: readonly Violation[]) =>
    violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${name}: ${v.impact} ${v.id} at ${v.nodes.map((n) => `${n.target.join(' ')} (${n.failureSummary})`).join('; ')}`);

  async function open(path: string): Promise<void> {
    const res = await page.goto(cp.url + path);
    assert.equal(res?.status(), 200, `${path}: ${res?.status()}`);
  }

  before(async () => {
    // An SMTP server set (never reached: nobody subscribes here) shows the subscribe form.
    cp = await startTestControlPlane({ roles: ['api'], env: { SMTP_URL: 'smtp://127.0.0.1:9' } });
    ada = await createAccount(cp.db.sql, { email: 'ada.lovelace@example.test' });
    api = apiClient(cp.url, ada.token);
    const project_id = ada.project_id;
    const monitor = async (name: string) =>
      (await api('POST', '/monitors', { project_id, name, url: 'https://shop.example.test/health' })).body.data.id as string;
    const shop = await monitor('Checkout API');
    shopId = shop;
    await seedResults(cp.db.sql, shop, { failEvery: 37 });
    await markChecked(cp.db.sql, shop, 1);
    await backdate(cp.db.sql, shop, 60);
    await seedIncident(
      cp.db.sql,
      shop,
      new Date(Date.now() - 12 * 24 * H),
      new Date(Date.now() - 12 * 24 * H + 2 * H),
      'Unexpected status 503',
    );
    const search = await monitor('Search');
    await seedResults(cp.db.sql, search, { hours: 2, stepMinutes: 2, failEvery: 4 });
    await markChecked(cp.db.sql, search, 2);
    await backdate(cp.db.sql, search, 3);
    await seedIncident(cp.db.sql, search, new Date(Date.now() - 0.7 * H), null, 'Timed out after 10000 ms');
    const images = await monitor('Image service');
    await markChecked(cp.db.sql, images, 1);
    await cp.db.sql`update monitors set degraded_regions = ${cp.db.sql.array(['eu-west'])} where id = ${images}`;
    const backup = (await api('POST', '/heartbeats', { project_id, name: 'Nightly backup', period: 86_400 })).body.data.id as string;
    for (const w of [
      { name: 'Search reindex', starts_at: new Date(Date.now() - H), ends_at: new Date(Date.now() + H), monitor_ids: [search] },
      {
        name: 'Backup host move',
        starts_at: new Date(Date.now() + 30 * H),
        ends_at: new Date(Date.now() + 32 * H),
        heartbeat_ids: [backup],
      },
    ]) {
      const res = await api('POST', '/maintenance-windows', {
        project_id,
        ...w,
        starts_at: w.starts_at.toISOString(),
        ends_at: w.ends_at.toISOString(),
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    const created = await api('POST', '/status-pages', {
      project_id,
      title: 'Acme status',
      description: 'Our public services, and the jobs behind them.',
      groups: [
        {
          name: 'Storefront',
          components: [
            { type: 'monitor', id: shop, display_name: 'Web shop', description: 'Browsing and checkout' },
            { type: 'monitor', id: search },
            { type: 'monitor', id: images, display_name: 'Images' },
          ],
        },
        { name: 'Background jobs', components: [{ type: 'heartbeat', id: backup, description: 'Every night at 02:00 UTC' }] },
      ],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    statusPage = created.body.data;
    const incident = await api('POST', `/status-pages/${statusPage.id}/incidents`, {
      title: 'Slow checkout',
      impact: 'minor',
      status: 'identified',
      message: 'Payments take **longer** than usual:\n\n- card payments\n- [the provider](https://status.example.test)',
      components: [{ type: 'monitor', id: shop }],
      published: true,
    });
    assert.equal(incident.status, 201, JSON.stringify(incident.body));
    incidentId = incident.body.data.id;
    browser = await openBrowser();
    page = browser.page;
  });

  after(async () => {
    await browser?.close();
    await cp?.stop();
  });

  it('has no serious or critical violation on the public status page', async () => {
    await open(`/status/${statusPage.slug}`);
    assert.match((await page.textContent('main'))!, /Web shop[^]*Search reindex|Search reindex[^]*Web shop/);
    assert.ok(await page.$('[data-testid=subscribe] input[type=email]'), 'the subscribe form is checked too');
    assert.deepEqual(blocking('public page', await violationsOf('status-page')), []);
  });

  it('has no serious or critical violation on the public status page in the dark', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    try {
      await open(`/status/${statusPage.slug}`);
      assert.deepEqual(blocking('public page, dark', await violationsOf('status-page-dark')), []);
    } finally {
      await page.emulateMedia({ colorScheme: 'light' });
    }
  });

  it('fits the public status page on a 375 px phone without scrolling sideways', async () => {
    await page.setViewportSize({ width: 375, height: 812 });
    try {
      await open(`/status/${statusPage.slug}`);
      await browser.shot('a11y-status-page-phone');
      assert.equal(await sidewaysOverflow(page), 0);
      assert.deepEqual(blocking('public page on a phone', await violationsOf('status-page-phone')), []);
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
  });

  it('has no serious or critical violation on the public history and incident pages, and fits them on a 375 px phone', async () => {
    const found: string[] = [];
    const month = new Date().toISOString().slice(0, 7);
    for (const [path, name] of [
      [`/status/${statusPage.slug}/history?month=${month}`, 'status-history'],
      [`/status/${statusPage.slug}/incidents/${incidentId}`, 'status-incident'],
    ] as const) {
      await open(path);
      found.push(...blocking(name, await violationsOf(name)));
      await page.setViewportSize({ width: 375, height: 812 });
      try {
        await open(path);
        assert.equal(await sidewaysOverflow(page), 0, `${name} scrolls sideways on a phone`);
        found.push(...blocking(`${name}-phone`, await violationsOf(`${name}-phone`)));
      } finally {
        await page.setViewportSize({ width: 1280, height: 860 });
      }
    }
    assert.deepEqual(found, []);
  });

  it('has no serious or critical violation on a private page’s password form, and fits it on a phone', async () => {
    const locked = await api('POST', '/status-pages', { project_id: ada.project_id, title: 'Team status', password: 'correct horse' });
    assert.equal(locked.status, 201, JSON.stringify(locked.body));
    const res = await page.goto(`${cp.url}/status/${locked.body.data.slug}`);
    assert.equal(res?.status(), 401);
    assert.deepEqual(blocking('password form', await violationsOf('status-page-password')), []);
    await page.setViewportSize({ width: 375, height: 812 });
    try {
      await page.goto(`${cp.url}/status/${locked.body.data.slug}`);
      assert.equal(await sidewaysOverflow(page), 0);
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
  });

  it('has no serious or critical violation on the dashboard’s status pages list and forms', async () => {
    await page.goto(`${cp.url}/app/sign-in`);
    await page.fill('input[name=email]', ada.email);
    await page.fill('input[name=password]', ada.password);
    await Promise.all([page.waitForURL(`${cp.url}/`), page.click('button[type=submit]')]);
    const found: string[] = [];
    for (const [path, name] of [
      ['/app/status-pages', 'status-pages'],
      ['/app/status-pages/new', 'status-page-new'],
      [`/app/status-pages/${statusPage.id}/edit`, 'status-page-edit'],
      [`/app/status-pages/${statusPage.id}/incidents`, 'status-page-incidents'],
      [`/app/status-pages/${statusPage.id}/subscribers`, 'status-page-subscribers'],
    ] as const) {
      await open(path);
      found.push(...blocking(name, await violationsOf(name)));
    }
    // The form with its folded rows opened, as a person adds a component and a group.
    await open('/app/status-pages/new');
    await page.click('button:has-text("Add a component")');
    await page.click('button:has-text("Add a group")');
    found.push(...blocking('status-page-new-opened', await violationsOf('status-page-new-opened')));
    await page.emulateMedia({ colorScheme: 'dark' });
    try {
      await open('/app/status-pages');
      found.push(...blocking('status-pages-dark', await violationsOf('status-pages-dark')));
    } finally {
      await page.emulateMedia({ colorScheme: 'light' });
    }
    assert.deepEqual(found, []);
  });

  it('has no serious or critical violation in the badges card of a monitor', async () => {
    await open(`/app/monitors/${shopId}`);
    await Promise.all([page.waitForURL(/\/app\/monitors\/[0-9a-f-]{36}$/), page.click('button:has-text("Create badges")')]);
    await page.click('[data-testid=badges] summary');
    await page.locator('[data-testid=badges]').scrollIntoViewIfNeeded();
    const found = blocking('monitor-badges', await violationsOf('monitor-badges'));
    await page.setViewportSize({ width: 375, height: 812 });
    try {
      await open(`/app/monitors/${shopId}`);
      await browser.shot('a11y-monitor-badges-phone');
      assert.equal(await sidewaysOverflow(page), 0, 'the card fits a phone');
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
    assert.deepEqual(found, []);
  });
});
