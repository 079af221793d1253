import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { openBrowser, sidewaysOverflow, type Browser } from './chromium.ts';

/** The monitor form's check types in a browser: the fields follow the type chosen, and it fits a phone. */
describe('the monitor form in a browser, by check type', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let browser: Browser;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql, { email: 'ada-type-browser@example.test' });
    browser = await openBrowser();
    const { page } = browser;
    await page.goto(`${cp.url}/app/sign-in`);
    await page.fill('input[name=email]', ada.email);
    await page.fill('input[name=password]', ada.password);
    await Promise.all([page.waitForURL(`${cp.url}/`), page.click('button[type=submit]')]);
  });
  after(async () => {
    await browser?.close();
    await cp?.stop();
  });

  it("shows the chosen type's fields only, relabels the URL, and creates a monitor of that type", async () => {
    const { page } = browser;
    await page.goto(`${cp.url}/app/monitors/new`);
    assert.ok(await page.isVisible('fieldset[data-types="http"]'));
    assert.ok(!(await page.isVisible('fieldset[data-types="tcp"]')), 'other types are hidden');
    assert.ok(!(await page.isVisible('fieldset[data-types="multistep"]')));

    await page.selectOption('select[name=type]', 'tcp');
    assert.ok(await page.isVisible('fieldset[data-types="tcp"]'));
    assert.ok(!(await page.isVisible('fieldset[data-types="http"]')));
    assert.ok(!(await page.isVisible('input[name=basic_auth_username]')), 'basic auth is for HTTP only');
    assert.equal(await page.textContent('label[for="f-url"]'), 'Address');
    assert.equal(await page.getAttribute('input[name=url]', 'placeholder'), 'tcp://db.example.com:5432');
    // The assertion sources a TCP check can read, and no other.
    const sources = await page.$$eval('select[name="assertion.0.source"] option', (options) =>
      options.filter((o) => !o.hidden).map((o) => o.getAttribute('value')),
    );
    assert.deepEqual(sources, ['', 'response_time', 'body', 'certificate_days']);

    // One empty assertion row is shown; the button shows the next.
    assert.ok(await page.isVisible('select[name="assertion.0.source"]'));
    assert.ok(!(await page.isVisible('select[name="assertion.1.source"]')));
    await page.click('button:has-text("Add an assertion")');
    assert.ok(await page.isVisible('select[name="assertion.1.source"]'));

    await page.fill('input[name=name]', 'Postgres');
    await page.fill('input[name=url]', 'tcp://db.example.test:5432');
    await page.fill('input[name="tcp.expect"]', 'ready');
    await page.selectOption('select[name="assertion.0.source"]', 'response_time');
    await page.selectOption('select[name="assertion.0.operator"]', 'less_than');
    await page.fill('input[name="assertion.0.target"]', '300');
    await browser.shot('check-type-tcp-form');
    await Promise.all([page.waitForURL(/\/app\/monitors\/[0-9a-f-]{36}$/), page.click('button:has-text("Create monitor")')]);
    const id = page.url().split('/').at(-1)!;
    const { body } = await apiClient(cp.url, ada.token)('GET', `/monitors/${id}`);
    assert.deepEqual([body.data.type, body.data.settings.expect, body.data.assertions[0].target], ['tcp', 'ready', 300]);
    assert.equal(await page.textContent('[data-testid=monitor-type]'), 'TCP port');

    await page.goto(`${cp.url}/app/monitors/${id}/edit`);
    assert.ok(await page.isVisible('fieldset[data-types="tcp"]'), 'the edit form opens on the stored type');
    await page.selectOption('select[name=type]', 'multistep');
    assert.ok(await page.isVisible('input[name="multistep.steps.0.url"]'));
    assert.equal(await page.textContent('label[for="f-url"]'), 'Address shown');
    assert.deepEqual(browser.cspErrors, []);
  });

  it('fits a phone (375 px) for every type, with a test result shown', async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 375, height: 812 });
    await page.goto(`${cp.url}/app/monitors/new`);
    const overflow: string[] = [];
    for (const type of ['http', 'tcp', 'dns', 'icmp', 'websocket', 'grpc', 'multistep']) {
      await page.selectOption('select[name=type]', type);
      const by = await sidewaysOverflow(page);
      if (by > 0) overflow.push(`${type}: ${by}px`);
    }
    await browser.shot('check-type-phone-multistep');
    // A test from a region without an agent: the form comes back with the panel saying so.
    await page.selectOption('select[name=type]', 'http');
    await page.fill('input[name=name]', 'Phone test');
    await page.fill('input[name=url]', 'https://example.test/');
    await page.selectOption('select[name="assertion.0.source"]', 'status_code');
    await page.fill('input[name="assertion.0.target"]', '200');
    await Promise.all([page.waitForSelector('[data-testid=test-problem]'), page.click('button:has-text("Test now")')]);
    assert.match((await page.textContent('[data-testid=test-problem]'))!, /No probe agent of any region is connected/);
    assert.equal(await page.inputValue('input[name=name]'), 'Phone test');
    await browser.shot('check-type-phone-test');
    const by = await sidewaysOverflow(page);
    if (by > 0) overflow.push(`test result: ${by}px`);
    assert.deepEqual(overflow, []);
  });
});
