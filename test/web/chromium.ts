import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

// Debian's chromium, never a downloaded browser (see ../shared/STACK.md).
export const CHROMIUM = '/usr/bin/chromium';
export const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];
/** Screenshots of the browser tests (git-ignored), for a person to look at. */
export const artifacts = fileURLToPath(new URL('../../test-artifacts/web/', import.meta.url));

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Every Content-Security-Policy violation the pages reported on the console. */
  cspErrors: string[];
  /** A screenshot of the whole page (or of what the window shows) to test-artifacts/web/<name>.png. */
  shot(name: string, page?: Page, opts?: { fullPage: boolean }): Promise<void>;
  close(): Promise<void>;
}

/** Chromium with a profile of its own, one page open, dialogs accepted. */
export async function openBrowser(viewport = { width: 1280, height: 860 }): Promise<Browser> {
  mkdirSync(artifacts, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), 'uptime-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS, viewport });
  const cspErrors: string[] = [];
  const watch = (p: Page) => {
    p.on('dialog', (d) => void d.accept());
    p.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspErrors.push(`${p.url()}: ${m.text()}`);
    });
  };
  const first = context.pages()[0];
  context.on('page', watch);
  if (first) watch(first);
  const page = first ?? (await context.newPage());
  return {
    context,
    page,
    cspErrors,
    shot: async (name, p = page, opts = { fullPage: true }) => {
      await p.screenshot({ path: join(artifacts, `${name}.png`), fullPage: opts.fullPage });
    },
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** How far the page scrolls sideways (0 when it fits its viewport). */
export function sidewaysOverflow(page: Page): Promise<number> {
  return page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
}
