// Browser test harness: Debian's chromium driven by playwright-core with a fresh profile, problem capture, screenshots.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, type Page, chromium } from 'playwright-core';
import { PROJECT } from '../helpers/rq-root.js';

export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOTS = path.join(PROJECT, 'test-output', 'screenshots');
export const BROWSER_SH = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'browser.sh');

// Headless on a shared CI box: no sandbox (runs as root), nothing that phones home or updates itself.
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface BrowserSession {
  context: BrowserContext;
  /** alert/confirm/prompt texts seen on any page (each is dismissed). */
  dialogs: string[];
  /** Uncaught page errors, console errors and failed or 4xx/5xx requests: a healthy UI has none. */
  problems: string[];
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/**
 * Starts chromium with a new empty user-data-dir. A missing or broken browser is an error that says
 * what to do, never a skipped test: the UI would otherwise ship untested.
 */
export async function startBrowser(): Promise<BrowserSession> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`browser tests need Debian's chromium at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (.ci/run does this)`);
  }
  const profile = await fsp.mkdtemp(path.join(os.tmpdir(), 'rq-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      viewport: { width: 1280, height: 800 },
      timeout: 30_000,
    });
  } catch (err) {
    await fsp.rm(profile, { recursive: true, force: true });
    throw new Error(`could not start chromium (${CHROMIUM}) through playwright-core: ${(err as Error).message}`, { cause: err });
  }
  const dialogs: string[] = [];
  const problems: string[] = [];
  const watch = (page: Page) => {
    page.on('dialog', (d) => {
      dialogs.push(`${d.type()}: ${d.message()}`);
      void d.dismiss().catch(() => undefined);
    });
    page.on('pageerror', (e) => problems.push(`page error on ${page.url()}: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console error on ${page.url()}: ${m.text()}`);
    });
    page.on('requestfailed', (r) => {
      // Closing a page or navigating away aborts its open event stream; that is not a failure of the UI.
      if (r.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`request failed: ${r.method()} ${r.url()}: ${r.failure()?.errorText}`);
    });
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`HTTP ${r.status()} for ${r.request().method()} ${r.url()}`);
    });
  };
  context.on('page', watch);
  for (const p of context.pages()) watch(p);
  return {
    context,
    dialogs,
    problems,
    newPage: () => context.newPage(),
    async close() {
      await context.close().catch(() => undefined);
      await fsp.rm(profile, { recursive: true, force: true });
    },
  };
}

/** A full-page screenshot into test-output/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await fsp.mkdir(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * Where the README's screenshots go: docs/screenshots (committed) only under `npm run screenshots`
 * (RQ_DOC_SCREENSHOTS=1), so an ordinary test run leaves the checkout as it was.
 */
export const DOC_SCREENSHOTS =
  process.env.RQ_DOC_SCREENSHOTS === '1' ? path.join(PROJECT, 'docs', 'screenshots') : path.join(PROJECT, 'test-output', 'doc-screenshots');

/** The four ways the UI is proven: desktop and phone width, light and dark system setting. */
export const LOOKS = [
  { name: 'desktop-light', width: 1280, scheme: 'light' },
  { name: 'desktop-dark', width: 1280, scheme: 'dark' },
  { name: 'phone-light', width: 375, scheme: 'light' },
  { name: 'phone-dark', width: 375, scheme: 'dark' },
] as const;
export type Look = (typeof LOOKS)[number];

/** A page of the session in that look: its width (800 px tall) and `prefers-color-scheme`. */
export async function pageIn(s: BrowserSession, look: Look): Promise<Page> {
  const page = await s.newPage();
  await page.setViewportSize({ width: look.width, height: 800 });
  await page.emulateMedia({ colorScheme: look.scheme });
  return page;
}

/** A full-page screenshot into docs/screenshots/<name>-<look>.png, for the README. */
export async function docScreenshot(page: Page, name: string, look: Look): Promise<string> {
  await fsp.mkdir(DOC_SCREENSHOTS, { recursive: true });
  const file = path.join(DOC_SCREENSHOTS, `${name}-${look.name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** Whether the page is wider than its viewport (something cut off, or a sideways scroll on a phone). */
export function overflowsSideways(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
}

/**
 * A page at rest: one with live sections (live.js) has its stream open and no look or reload pending;
 * any other page at once. Clicking a form's button before then races the page's own reload.
 */
export async function settled(page: Page): Promise<void> {
  await page.waitForSelector('body:not([data-live]), body[data-live="open"][data-settled="true"]');
}

/** Clicks what leaves the page (a form's button, a link) and resolves once the page it leads to has loaded and settled. */
export async function follow(page: Page, selector: string): Promise<void> {
  await Promise.all([page.waitForNavigation(), page.click(selector)]);
  await settled(page);
}
