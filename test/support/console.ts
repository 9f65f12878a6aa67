import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, BrowserContext, BrowserContextOptions, Locator, Page } from 'playwright-core';
import type { Api } from './api.ts';
import { landedOn, launchBrowser, signIn } from './browser.ts';
import { freePort, ROOT, testServer, type TestServer } from './server.ts';
import { eventually } from './tokens.ts';

// The console's browser tests share one scene: the server (first-start
// admin with a known password), Debian's Chromium, pages signed in as that
// admin, and checks every page gets: axe-core, no script error or CSP
// refusal, no horizontal scrolling at phone width, screenshots for people
// under test-results/console (ignored by git).

export const CONSOLE_ADMIN = { loginName: 'admin@default.example.test', password: 'Console-Admin-Passw0rd' };
export const SHOTS = join(ROOT, 'test-results/console');
export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1366, height: 900 };

export interface ConsoleScene {
  server: TestServer;
  browser: Browser;
  /** The admin's API (PAT of the first-start machine user). */
  admin: Api;
  /** `${issuer}/ui/console/` */
  consoleUrl: string;
  /** Messages of the browser that mean a broken page: CSP refusals, script errors. */
  problems: string[];
  /** A page in a new context, signed in as `user` (the admin by default), on the console's first page. */
  signedInPage(options?: BrowserContextOptions, user?: { loginName: string; password: string }): Promise<{ context: BrowserContext; page: Page }>;
  stop(): Promise<void>;
}

/** `env`: more server settings (an SMTP server to read codes from). */
export async function startConsoleScene(env: Record<string, string> = {}): Promise<ConsoleScene> {
  mkdirSync(SHOTS, { recursive: true });
  const port = await freePort();
  const [server, browser] = await Promise.all([
    testServer({ env: { PORT: String(port), ISSUER: `http://localhost:${port}`, ADMIN_PASSWORD: CONSOLE_ADMIN.password, ...env } }),
    launchBrowser(),
  ]);
  const consoleUrl = `${server.issuer}/ui/console/`;
  const problems: string[] = [];
  const contexts: BrowserContext[] = [];
  return {
    server,
    browser,
    admin: server.api,
    consoleUrl,
    problems,
    async signedInPage(options = {}, user = CONSOLE_ADMIN) {
      const context = await browser.newContext({ locale: 'en-US', viewport: DESKTOP, ...options });
      contexts.push(context);
      context.setDefaultTimeout(10_000);
      const page = await context.newPage();
      watch(page, problems);
      await page.goto(consoleUrl);
      await landedOn(page, `${server.issuer}/ui/login`);
      await signIn(page, user);
      await landedOn(page, `${consoleUrl}orgs/`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      return { context, page };
    },
    async stop() {
      await Promise.all(contexts.map((c) => c.close()));
      await browser.close();
      await server.stop();
    },
  };
}

export function watch(page: Page, problems: string[]): void {
  page.on('console', (message) => {
    // API answers of 4xx are part of the tests (bad input, missing calls); anything else is a problem.
    if (message.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(message.text()))
      problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
}

/** axe-core on the page as it is now: no serious or critical violation. */
export async function assertAccessible(page: Page, name: string): Promise<void> {
  const results = await new AxeBuilder({ page }).analyze();
  const bad = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`),
    [],
    `axe-core on ${name}`,
  );
}

export async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

/** The page is no wider than the window: nothing to scroll sideways. */
export async function assertNoSideScroll(page: Page, name: string): Promise<void> {
  const { scrollWidth, clientWidth } = await page.evaluate<{ scrollWidth: number; clientWidth: number }>(
    '({ scrollWidth: document.scrollingElement.scrollWidth, clientWidth: document.scrollingElement.clientWidth })',
  );
  assert.ok(scrollWidth <= clientWidth, `${name}: ${scrollWidth} px of content in a ${clientWidth} px window`);
}

/** The table's body has `count` rows (waiting for a list that is still loading). */
export async function rowsAre(table: Locator, count: number): Promise<void> {
  const rows = table.locator('tbody tr');
  const reached = await eventually(async () => (await rows.count()) === count, 10_000, 50);
  assert.ok(reached, `${count} rows expected, ${await rows.count()} shown`);
}
