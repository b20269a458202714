// Browser: pausing a queue from its page shows PAUSE, holds new messages in que, and Resume undoes it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WebRoot, send, startWebRoot, waitState } from '../web/web-root.js';
import { type BrowserSession, BROWSER_SH, screenshot, startBrowser } from './browser-session.js';

let w: WebRoot;
let b: BrowserSession;

beforeAll(async () => {
  w = await startWebRoot({ queues: { jobs: { script: BROWSER_SH } } });
  b = await startBrowser();
}, 60_000);
afterAll(async () => {
  await b?.close();
  await w?.stop();
});

describe('queue page in a browser', () => {
  it('pauses the queue with its Pause button and resumes it', async () => {
    const done = await send(w.base, 'jobs', { param1: 'noop' });
    await waitState(w.base, 'jobs', done, ['done']);
    const page = await b.newPage();
    await page.goto(`${w.base}/q/jobs`);
    expect(await page.title()).toBe('RQ :: jobs');
    expect(await page.locator('#queue-status').textContent()).toBe('UP');
    expect(await page.locator(`#done-list li[data-msg-id="${done}"] a`).getAttribute('href')).toBe(`/q/jobs/${done}`);
    await screenshot(page, 'queue-up');

    await Promise.all([page.waitForURL(`${w.base}/q/jobs`), page.locator('#btn-pause').click()]);
    expect(await page.locator('#queue-status').textContent()).toBe('PAUSE');
    expect(await page.locator('#flash-notice').textContent()).toBe('Successfully paused queue jobs');
    expect(await page.locator('#btn-resume').isVisible()).toBe(true);
    expect(await page.locator('#btn-pause').count()).toBe(0);

    // Paused means queued, not run.
    const held = await send(w.base, 'jobs', { param1: 'noop' });
    await new Promise((r) => setTimeout(r, 300));
    await page.reload();
    expect(await page.locator('#flash-notice').count()).toBe(0);
    expect(await page.locator('#queue-status').textContent()).toBe('PAUSE');
    expect(await page.locator('#count-que').textContent()).toBe('1');
    expect(await page.locator(`#que-list li[data-msg-id="${held}"]`).count()).toBe(1);
    await page.locator('#config summary').click();
    await screenshot(page, 'queue-paused');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'queue-paused-phone');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 800 });

    await Promise.all([page.waitForURL(`${w.base}/q/jobs`), page.locator('#btn-resume').click()]);
    expect(await page.locator('#flash-notice').textContent()).toBe('Successfully resumed queue jobs');
    expect(await page.locator('#queue-status').textContent()).toBe('UP');
    await waitState(w.base, 'jobs', held, ['done']);

    expect(b.dialogs).toEqual([]);
    expect(b.problems).toEqual([]);
    await page.close();
  });
});
