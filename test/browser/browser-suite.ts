// Vitest hooks giving a browser test file one rq root (rq-mgr + web) with its queues and one chromium, shared by its tests.
import { afterAll, beforeAll } from 'vitest';
import { type WebRoot, startWebRoot } from '../web/web-root.js';
import { type BrowserSession, BROWSER_SH, startBrowser } from './browser-session.js';

export interface BrowserSuite {
  w: WebRoot;
  b: BrowserSession;
}

/** Queues named in `queues` all run test/browser/fixtures/browser.sh. */
export function browserSuite(queues: string[]): BrowserSuite {
  const ctx = {} as BrowserSuite;
  beforeAll(async () => {
    ctx.w = await startWebRoot({ queues: Object.fromEntries(queues.map((q) => [q, { script: BROWSER_SH }])) });
    ctx.b = await startBrowser();
  }, 60_000);
  afterAll(async () => {
    await ctx.b?.close();
    await ctx.w?.stop();
  });
  return ctx;
}
