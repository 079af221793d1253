import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { apiClient } from '../harness/api.ts';
import { startWebhookSink } from '../harness/http.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { ARGS, CHROMIUM, artifacts } from './chromium.ts';
import { backdate, markChecked, seedIncident, seedResults } from './seed.ts';

describe('the dashboard in a browser', () => {
  let cp: TestControlPlane;
  let account: TestAccount;
  let profile: string;
  let context: BrowserContext;
  let page: Page;

  const shot = (name: string) => page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });

  async function signIn(p: Page = page): Promise<void> {
    await p.goto(`${cp.url}/app/sign-in`);
    await p.fill('input[name=email]', account.email);
    await p.fill('input[name=password]', account.password);
    await Promise.all([p.waitForURL(`${cp.url}/`), p.click('button[type=submit]')]);
  }

  before(async () => {
    mkdirSync(artifacts, { recursive: true });
    cp = await startTestControlPlane({ roles: ['api'] });
    account = await createAccount(cp.db.sql, { email: 'ada.lovelace@example.test' });
    profile = mkdtempSync(join(tmpdir(), 'uptime-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      viewport: { width: 1280, height: 860 },
    });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: cp.url });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('dialog', (d) => void d.accept());
  });

  after(async () => {
    await context?.close();
    rmSync(profile, { recursive: true, force: true });
    await cp.stop();
  });

  beforeEach(async () => {
    await context.clearCookies();
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  it('signs in through the form and lands on the overview', async () => {
    await page.goto(`${cp.url}/`);
    await page.waitForURL(/\/app\/sign-in/);
    await shot('01-sign-in');
    await signIn();
    assert.equal(await page.textContent('h1'), 'Overview');
    assert.match((await page.textContent('.sidebar'))!, /ada\.lovelace@example\.test/);
    await shot('02-overview-empty');
  });

  it('creates a monitor from its form and follows its status live, without a reload', async () => {
    await signIn();
    await page.click('a[href="/app/monitors"]');
    await page.click('text=New monitor');
    await page.fill('input[name=name]', 'Checkout API');
    await page.fill('input[name=url]', 'https://shop.example.test/health');
    await page.selectOption('select[name=_method]', 'HEAD');
    await page.fill('input[name=valid_http_codes]', '200-299, 301');
    await page.selectOption('select[name=interval]', '30');
    await shot('03-monitor-form');
    await Promise.all([page.waitForURL(/\/app\/monitors\/[0-9a-f-]{36}$/), page.click('button:has-text("Create monitor")')]);
    assert.match((await page.textContent('h1'))!, /Checkout API/);
    assert.equal(await page.getAttribute('.stats [data-status]', 'data-status'), 'pending');

    const id = page.url().split('/').at(-1)!;
    const api = apiClient(cp.url, account.token);
    const { body } = await api('GET', `/monitors/${id}`);
    assert.equal(body.data.method, 'HEAD');
    assert.equal(body.data.interval, 30);
    assert.deepEqual(body.data.valid_http_codes.slice(-2), [299, 301]);

    // The ingest role's writes, as if the agents had reported: the page polls and shows them.
    await seedResults(cp.db.sql, id, { failEvery: 37 });
    await markChecked(cp.db.sql, id, 1);
    await page.waitForSelector('.stats [data-status="up"]', { timeout: 15_000 });
    assert.match((await page.textContent('[data-testid=last-checked]'))!, /ago/);
    await page.waitForSelector('svg.chart polyline');
    await backdate(cp.db.sql, id, 60);
    const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000);
    await seedIncident(cp.db.sql, id, hoursAgo(3), new Date(hoursAgo(3).getTime() + 420_000));
    await seedIncident(cp.db.sql, id, hoursAgo(24 * 12), hoursAgo(24 * 12 - 2), 'status 503: Service Unavailable');
    await seedIncident(cp.db.sql, id, hoursAgo(24 * 33), hoursAgo(24 * 33 - 0.3), 'connect ECONNREFUSED');
    await page.reload();
    await shot('04-monitor-detail');

    await page.click('a[href="/app/monitors"]');
    await page.waitForSelector('svg.beats rect.up');
    await shot('05-monitors-list');
  });

  it('creates an API token that works against the REST API until it is revoked', async () => {
    await signIn();
    await page.click('a[href="/app/settings/tokens"]');
    await page.fill('input[name=name]', 'laptop');
    await page.click('button:has-text("Create token")');
    const token = (await page.textContent('[data-testid=token-value]'))!;
    assert.match(token, /^upt_[A-Za-z0-9_-]{43}$/);
    await shot('06-token-created');

    const api = apiClient(cp.url, token);
    assert.equal((await api('GET', '/monitors')).status, 200);

    await page.goto(`${cp.url}/app/settings/tokens`);
    assert.equal(await page.locator('[data-testid=token-value]').count(), 0, 'the token is shown once');
    await Promise.all([page.waitForURL(`${cp.url}/app/settings/tokens`), page.click('tr[data-token="laptop"] button:has-text("Revoke")')]);
    await page.waitForSelector('.flash:has-text("revoked")');
    const after = await api('GET', '/monitors');
    assert.equal(after.status, 401);
    assert.deepEqual(after.body, { message: 'Unauthorized' });
    assert.equal(await page.locator('tr[data-token="laptop"]').count(), 0);
  });

  it('creates the MCP token on the same page, shown once', async () => {
    await signIn();
    await page.goto(`${cp.url}/app/settings/tokens`);
    await page.click('#mcp button:has-text("Rotate")');
    const token = (await page.textContent('#mcp [data-testid=token-value]'))!;
    assert.match(token, /^uptm_/);
    assert.match((await page.textContent('#mcp pre'))!, new RegExp(token));
    await shot('07-mcp-token');
    const api = apiClient(cp.url, token);
    assert.equal((await api('GET', '/monitors')).status, 401, 'an MCP token does not open the REST API');
  });

  it('creates a heartbeat and copies its ping URL', async () => {
    await signIn();
    await page.goto(`${cp.url}/app/heartbeats/new`);
    await page.fill('input[name=name]', 'Nightly backup');
    await page.fill('input[name=cron_schedule]', '30 2 * * *');
    await page.fill('input[name=timezone]', 'Europe/Berlin');
    await page.fill('input[name=grace_period]', '1800');
    // The run rules are folded away; their output rules show one empty row and a button for the next.
    assert.equal(await page.isVisible('input[name=min_duration]'), false);
    await page.click('summary:has-text("Run rules")');
    await page.fill('input[name=min_duration]', '120');
    await page.fill('input[name=success_exit_codes]', '0, 3');
    const rules = '[data-testid=output-rules] .rule-row:not(.rows-head)';
    assert.equal(await page.locator(`${rules}:visible`).count(), 1);
    await page.fill('input[name="output_rules.0.value"]', 'FATAL');
    await page.click('button:has-text("Add an output rule")');
    assert.equal(await page.locator(`${rules}:visible`).count(), 2);
    await page.selectOption('select[name="output_rules.1.outcome"]', 'success');
    await page.fill('input[name="output_rules.1.value"]', 'nothing to back up');
    await shot('08-heartbeat-run-rules');
    await Promise.all([page.waitForURL(/\/app\/heartbeats\/[0-9a-f-]{36}$/), page.click('button:has-text("Create heartbeat")')]);
    const id = page.url().split('/').at(-1)!;
    const { body } = await apiClient(cp.url, account.token)('GET', `/heartbeats/${id}`);
    assert.equal(body.data.cron_schedule, '30 2 * * *');
    assert.equal(body.data.timezone, 'Europe/Berlin');
    assert.equal(body.data.min_duration, 120);
    assert.deepEqual(body.data.success_exit_codes, [0, 3]);
    assert.deepEqual(body.data.output_rules, [
      { match: 'contains', value: 'FATAL', outcome: 'fail' },
      { match: 'contains', value: 'nothing to back up', outcome: 'success' },
    ]);

    await page.click('.copy-row:has([data-testid=ping-url]) button');
    await page.waitForSelector('.copy-row:has([data-testid=ping-url]) button[data-copied]');
    const copied = await page.evaluate<string>('navigator.clipboard.readText()');
    assert.equal(copied, body.data.ping_url);
    assert.match((await page.textContent('.snippet'))!, new RegExp(`curl -fsS .*${id}`));
    await shot('08-heartbeat-detail');
  });

  it('publishes a status page of the project and opens it', async () => {
    await signIn();
    await page.click('a[href="/app/status-pages"]');
    await page.click('a:has-text("New status page")');
    assert.equal(await page.inputValue('input[name=title]'), 'Default', 'titled after the project');
    await Promise.all([page.waitForURL(/\/app\/status-pages#p-/), page.click('button:has-text("Create status page")')]);
    const [statusPage] = await Promise.all([context.waitForEvent('page'), page.click('[data-testid=open-status-page]')]);
    await statusPage.waitForLoadState();
    assert.match(statusPage.url(), /\/status\/[A-Za-z0-9_-]{22}$/);
    assert.equal(await statusPage.textContent('h1'), 'Default');
    assert.match((await statusPage.textContent('body'))!, /Checkout API/);
    assert.doesNotMatch(await statusPage.content(), /shop\.example\.test/, 'no monitor URL on a public page');
    assert.equal(await statusPage.locator('svg.bars rect').first().count(), 1);
    await statusPage.screenshot({ path: join(artifacts, '09-status-page.png'), fullPage: true });
    await statusPage.close();
  });

  it('adds a webhook integration, tests it, and links it to a new protected trigger', async () => {
    const sink = await startWebhookSink();
    try {
      await signIn();
      await page.click('a[href="/app/integrations"]');
      await page.click('text=New integration');
      await shot('12-integration-types');
      await page.click('a[href="/app/integrations/new?type=webhook"]');
      await page.fill('input[name=name]', 'Ops webhook');
      await page.fill('input[name="config.url"]', `${sink.url}/hook`);
      await Promise.all([page.waitForURL(/\/app\/integrations\/[0-9a-f-]{36}$/), page.click('button:has-text("Create integration")')]);
      await Promise.all([page.waitForURL(/\/app\/integrations\/[0-9a-f-]{36}$/), page.click('button:has-text("Send a test")')]);
      await sink.waitForRequests(1);
      await page.waitForSelector('.flash:has-text("delivered")');
      await page.waitForSelector('.pill.up:has-text("Delivered")');
      await shot('13-integration-detail');

      await page.goto(`${cp.url}/app/triggers/new`);
      await page.fill('input[name=name]', 'Deploy finished');
      await page.fill('textarea[name=default_message]', 'A deploy went out');
      await page.check('input[name=integration_ids]');
      await page.fill('input[name=rate_max]', '30');
      await page.click('button:has-text("Create trigger")');
      const token = (await page.textContent('[data-testid=trigger-token]'))!;
      const url = (await page.textContent('[data-testid=trigger-url]'))!;
      const fired = await fetch(`${cp.url}/api/notify/${url.split('/').at(-1)}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'message=v1.4.0 is live',
      });
      assert.equal(fired.status, 202);
      await page.waitForSelector('td:has-text("v1.4.0 is live")', { timeout: 15_000 });
      await shot('14-trigger-detail');
    } finally {
      await sink.close();
    }
  });

  it("writes an integration's message, previews the exact request and sends a test that shows what went out", async () => {
    const sink = await startWebhookSink();
    try {
      const hook = await apiClient(cp.url, account.token)('POST', '/integrations', {
        project_id: account.project_id,
        name: 'Ops Slack',
        type: 'slack',
        config: { url: `${sink.url}/services/T/B/browser-slack-token` },
      });
      await signIn();
      await page.goto(`${cp.url}/app/integrations/${hook.body.data.id}`);
      await Promise.all([page.waitForURL(/\/message$/), page.click('text=Edit the message, preview it, send a test')]);
      await page.waitForSelector('[data-testid=preview] [data-testid=payload]');
      await page.fill('input[name="template.title"]', '{{subject.name}} is {{status}}');
      await page.fill('textarea[name="template.body"]', '*{{cause}}* in {{regions}} since {{since}}');
      await Promise.all([page.waitForURL(/\/message\/preview$/), page.click('button:has-text("Preview")')]);
      const body = (await page.textContent('[data-testid=preview] [data-testid=payload-body]'))!;
      assert.match(body, /Sample monitor is down/);
      assert.match(body, /\*HTTP 503 \(expected 200-299\)\* in eu-west, us-east since/);
      assert.equal(await page.inputValue('input[name="template.title"]'), '{{subject.name}} is {{status}}', 'the form keeps the text');
      await shot('15-integration-message-preview');
      await Promise.all([page.waitForURL(/\/message\/test$/), page.click('button:has-text("Send test")')]);
      const [got] = await sink.waitForRequests(1);
      assert.equal((await page.textContent('[data-testid=sent] [data-testid=payload-raw]'))!, got!.body);
      await shot('16-integration-message-sent');
      await Promise.all([page.waitForURL(/\/message$/), page.click('button:has-text("Save message")')]);
      await page.waitForSelector('.flash:has-text("Message saved")');
    } finally {
      await sink.close();
    }
  });

  it('plans a one-off maintenance window from its form, which shows the fields of the kind chosen, and deletes it', async () => {
    await signIn();
    await page.click('a[href="/app/maintenance"]');
    await page.click('text=New window');
    assert.ok(await page.isVisible('input[name=starts_at]'));
    assert.ok(!(await page.isVisible('input[name=cron]')), 'the recurring fields are hidden while "Once" is chosen');
    await page.check('input[name=schedule_kind][value=recurring]');
    assert.ok(await page.isVisible('input[name=cron]'));
    assert.ok(!(await page.isVisible('input[name=starts_at]')));
    await page.check('input[name=schedule_kind][value=one_off]');
    await page.fill('input[name=name]', 'Database upgrade');
    await page.fill('input[name=starts_at]', '2030-07-01T22:00');
    await page.fill('input[name=ends_at]', '2030-07-02T01:30');
    await page.fill('input[name=timezone]', 'Europe/Berlin');
    await page.check('label:has-text("Checkout API") input[name=monitor_ids]');
    await page.check('label:has-text("Nightly backup") input[name=heartbeat_ids]');
    await shot('15-maintenance-form');
    await Promise.all([page.waitForURL(`${cp.url}/app/maintenance`), page.click('button:has-text("Create window")')]);
    const { body } = await apiClient(cp.url, account.token)('GET', `/maintenance-windows?project_id=${account.project_id}`);
    assert.equal(body.data.length, 1);
    const w = body.data[0];
    assert.deepEqual([w.starts_at, w.ends_at], ['2030-07-01T20:00:00.000000Z', '2030-07-01T23:30:00.000000Z']);
    assert.equal(w.monitor_ids.length, 1);
    assert.equal(w.heartbeat_ids.length, 1);
    const row = (await page.textContent(`tr[data-window="${w.id}"]`))!;
    assert.match(row, /Database upgrade[\s\S]*2030-07-01 22:00[\s\S]*once, Europe\/Berlin[\s\S]*Checkout API[\s\S]*Nightly backup/);
    await shot('16-maintenance-list');
    await Promise.all([page.waitForURL(`${cp.url}/app/maintenance`), page.click(`tr[data-window="${w.id}"] button:has-text("Delete")`)]);
    await page.waitForSelector('.flash:has-text("deleted")');
    assert.equal((await apiClient(cp.url, account.token)('GET', `/maintenance-windows/${w.id}`)).status, 404);
  });

  it('fits a phone screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await signIn();
    for (const [path, name] of [
      ['/', '10-phone-overview'],
      ['/app/monitors', '11-phone-monitors'],
    ] as const) {
      await page.goto(cp.url + path);
      await shot(name);
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      assert.ok(overflow <= 0, `${path} scrolls sideways by ${overflow}px`);
    }
  });
});
