import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { openBrowser, type Browser } from './chromium.ts';

/** The API reference at /docs (Swagger UI), in a browser, under a policy as strict as the dashboard's. */
describe('the API reference page', () => {
  let cp: TestControlPlane;
  let browser: Browser;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'], env: { PUBLIC_URL: 'https://uptime.example.test' } });
    browser = await openBrowser();
  });
  after(async () => {
    await browser?.close();
    await cp?.stop();
  });

  it('loads and renders every operation without a Content-Security-Policy violation', async () => {
    const { page } = browser;
    const res = await page.goto(`${cp.url}/docs`);
    assert.equal(res?.status(), 200);
    await page.waitForSelector('.swagger-ui .info .title');
    await page.waitForSelector('#operations-Monitors-listMonitors');
    assert.match((await page.textContent('.swagger-ui .info .title'))!, /uptime API/);
    await page.click('#operations-Monitors-createMonitor .opblock-summary');
    await page.waitForSelector('#operations-Monitors-createMonitor .opblock-body');
    await browser.shot('docs');
    assert.deepEqual(browser.cspErrors, []);
  });

  it('sends a policy that allows no inline script, and no inline style but Swagger UI’s own logo', async () => {
    const res = await fetch(`${cp.url}/docs/static/index.html`);
    const csp = res.headers.get('content-security-policy')!;
    assert.match(csp, /script-src 'self';/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|upgrade-insecure-requests/);
    assert.match(csp, /style-src 'self' 'sha256-[A-Za-z0-9+/]+=';/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, /connect-src 'self' https:\/\/uptime\.example\.test(;|$)/, '"Try it out" may call the API at PUBLIC_URL');
    const dashboard = await fetch(`${cp.url}/app/sign-in`);
    assert.doesNotMatch(dashboard.headers.get('content-security-policy')!, /sha256|unsafe/, "the dashboard's own policy is unchanged");
  });
});
