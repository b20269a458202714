// Browser: the dashboard and the queue page follow GET /events — counts and lists change as messages are created and finish, with no polling request while the stream is open; polling only while it is down.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { send } from '../web/web-root.js';
import { screenshot } from './browser-session.js';
import { browserSuite } from './browser-suite.js';

const suite = browserSuite(['live']);

// The page's clock is Playwright's: once paused, time only passes when a test says so, so "no request in
// ten seconds" takes no ten seconds, and a 2 s poll loop, were there one, could not hide.
beforeAll(async () => {
  await suite.b.context.clock.install();
});

/** Every request a page makes, by path. */
function recordRequests(page: Page): string[] {
  const seen: string[] = [];
  page.on('request', (r) => seen.push(new URL(r.url()).pathname));
  return seen;
}
const polls = (seen: string[]) => seen.filter((p) => p.endsWith('.json'));

/** Lets page time pass in 300 ms steps (one burst's refresh each) until `probe` gives `want`. */
async function advanceUntil(page: Page, probe: () => Promise<string | null>, want: string): Promise<void> {
  await expect
    .poll(
      async () => {
        await page.clock.runFor(300);
        return probe();
      },
      { timeout: 15_000 },
    )
    .toBe(want);
}

/** Loads `url` with time flowing, waits for the stream's `ready` and the one look after it, then stops the clock. */
async function openLive(page: Page, url: string, firstLook: string[]): Promise<void> {
  await page.clock.resume();
  const looked = firstLook.map((p) => page.waitForResponse((r) => new URL(r.url()).pathname === p));
  await page.goto(url);
  await page.waitForSelector('body[data-live="open"]');
  await Promise.all(looked);
  await pauseClock(page);
}

/** Stops page time a second ahead of where it is (it runs ahead of the real clock once a test has advanced it). */
async function pauseClock(page: Page): Promise<void> {
  await page.clock.pauseAt((await page.evaluate(() => Date.now())) + 1000);
}

describe('live updates from GET /events in a browser', () => {
  it("the dashboard's counts follow messages created and finished, without a single poll", async () => {
    const page = await suite.b.newPage();
    const seen = recordRequests(page);
    await suite.w.mgr.cmd('pause_queue', 'live');
    await openLive(page, `${suite.w.base}/`, ['/dashboard.json', '/tracked.json', '/limits.json']);
    await page.evaluate(() => ((window as unknown as { rqMark: string }).rqMark = 'same page'));
    seen.length = 0;
    // Five rounds of the old 2 s poll.
    await page.clock.runFor(10_000);
    expect(seen).toEqual([]);

    await send(suite.w.base, 'live', { param1: 'noop' });
    await send(suite.w.base, 'live', { param1: 'noop' });
    await advanceUntil(page, () => page.locator('#q-live-que').textContent(), '2');
    // Refetched because of the two created events (at most once each), never on a timer; #tracked only follows tracked messages.
    expect(polls(seen).filter((p) => p === '/dashboard.json').length).toBeLessThanOrEqual(2);
    expect(polls(seen)).not.toContain('/tracked.json');

    await suite.w.mgr.cmd('resume_queue', 'live');
    await advanceUntil(page, () => page.locator('#q-live-done').textContent(), '2');
    expect(await page.locator('#q-live-que').textContent()).toBe('0');
    expect(await page.locator('#q-live-status').textContent()).toBe('UP');
    expect(await page.evaluate(() => (window as unknown as { rqMark?: string }).rqMark)).toBe('same page');

    seen.length = 0;
    await page.clock.runFor(10_000);
    // The last run's later events (its end, its slot) may still reach the page after the done count
    // shows 2 and make one more look; a poll would be five of each in these 10 s.
    for (const p of ['/dashboard.json', '/limits.json']) expect(seen.filter((s) => s === p).length, p).toBeLessThanOrEqual(1);
    expect(seen.filter((s) => s !== '/dashboard.json' && s !== '/limits.json')).toEqual([]);
    await screenshot(page, 'dashboard-events');
    expect(suite.b.problems).toEqual([]);
    await page.close();
  });

  it('the queue page moves a message from RUN to DONE in place as it runs and finishes, fetching only itself', async () => {
    const page = await suite.b.newPage();
    const seen = recordRequests(page);
    await openLive(page, `${suite.w.base}/q/live`, ['/q/live']);
    await page.evaluate(() => ((window as unknown as { rqMark: string }).rqMark = 'same page'));
    const doneBefore = Number(await page.locator('#count-done').textContent());
    seen.length = 0;
    await page.clock.runFor(10_000);
    expect(seen).toEqual([]);

    const gate = path.join(suite.w.root, 'live-gate');
    const id = await send(suite.w.base, 'live', { param1: 'colour', param2: gate });
    await advanceUntil(page, () => page.locator('#count-run').textContent(), '1');
    expect(await page.locator(`#message-rows tr[data-msg-id="${id}"][data-state="run"]`).count()).toBe(1);
    await screenshot(page, 'queue-events-running');

    await fs.writeFile(gate, '');
    await advanceUntil(page, () => page.locator('#count-done').textContent(), String(doneBefore + 1));
    expect(await page.locator(`#message-rows tr[data-msg-id="${id}"][data-state="done"]`).count()).toBe(1);
    expect(await page.locator('#message-rows tr[data-state="run"]').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { rqMark?: string }).rqMark)).toBe('same page');
    // The message's four or five events made at most that many refetches of the page, and nothing else was asked.
    expect(new Set(seen)).toEqual(new Set(['/q/live']));
    expect(seen.length).toBeLessThanOrEqual(5);
    await screenshot(page, 'queue-events');
    expect(suite.b.problems).toEqual([]);
    await page.close();
  });

  // A browser on a loaded 2-core machine: 40 s of page time under a fake clock can take longer than the default 30 s.
  it('polls every 2 s while the stream is refused, and stops once it is back', { timeout: 90_000 }, async () => {
    const page = await suite.b.newPage();
    const seen = recordRequests(page);
    await page.route('**/events', (route) => route.fulfill({ status: 503, contentType: 'text/plain', body: 'busy' }));
    await page.clock.resume();
    await page.goto(`${suite.w.base}/`);
    await page.waitForSelector('body[data-live="polling"]');
    await pauseClock(page);
    // Two rounds of 2 s, each answered (a round that comes while the last look is still being handled runs right after it).
    for (let round = 0; round < 2; round++) {
      const polled = page.waitForResponse((r) => new URL(r.url()).pathname === '/dashboard.json');
      await page.clock.runFor(2000);
      await polled;
    }

    await page.unroute('**/events');
    // The browser gave up on the refused stream: the page opens it again after 30 s.
    await page.clock.runFor(30_000);
    await page.waitForSelector('body[data-live="open"]');
    // The one look after `ready` (scheduled in the same task that opened the page's state, so counted in
    // data-settled already) is answered before the count starts. Waiting for its response instead raced:
    // it could come before the wait was set up.
    await page.clock.runFor(300);
    await page.waitForSelector('body[data-settled="true"]');
    seen.length = 0;
    await page.clock.runFor(10_000);
    expect(polls(seen)).toEqual([]);
    // The refused stream itself (its 503, and what chromium says about it) is the only problem.
    const refused = suite.b.problems.filter((p) => /\/events\b|EventSource|status of 503/.test(p));
    expect(refused.some((p) => /^HTTP 503 for GET .*\/events$/.test(p))).toBe(true);
    expect(suite.b.problems.filter((p) => !refused.includes(p))).toEqual([]);
    suite.b.problems.length = 0;
    await page.close();
  });
});
