// Browser: pausing a queue from its page shows PAUSE, holds new messages in que, and Resume undoes it.
import { describe, expect, it } from 'vitest';
import { send, stateOf, waitState } from '../web/web-root.js';
import { follow, screenshot, settled } from './browser-session.js';
import { browserSuite } from './browser-suite.js';

const suite = browserSuite(['jobs']);

describe('queue page in a browser', () => {
  it('pauses the queue with its Pause button and resumes it', async () => {
    const done = await send(suite.w.base, 'jobs', { param1: 'noop' });
    await waitState(suite.w.base, 'jobs', done, ['done']);
    const page = await suite.b.newPage();
    await page.goto(`${suite.w.base}/q/jobs`);
    await settled(page);
    expect(await page.title()).toBe('RQ :: jobs');
    expect(await page.locator('#queue-status').textContent()).toBe('UP');
    expect(await page.locator(`#message-rows tr[data-msg-id="${done}"][data-state="done"] a.msg-link`).getAttribute('href')).toBe(`/q/jobs/${done}`);
    await screenshot(page, 'queue-up');

    await follow(page, '#btn-pause');
    expect(new URL(page.url()).pathname).toBe('/q/jobs');
    expect(await page.locator('#queue-status').textContent()).toBe('PAUSE');
    expect(await page.locator('#flash-notice').textContent()).toBe('Queue jobs paused');
    expect(await page.locator('#btn-resume').isVisible()).toBe(true);
    expect(await page.locator('#btn-pause').count()).toBe(0);

    // Paused means queued, not run. The queue decides whether to start a message at its commit, before
    // answering ok (src/queue/queue.ts create → pump); a marker committed after it makes it decide again.
    // Once the marker's ok is back, neither has started, and neither will while paused.
    const held = await send(suite.w.base, 'jobs', { param1: 'noop' });
    const marker = await send(suite.w.base, 'jobs', { param1: 'noop' });
    expect([await stateOf(suite.w.base, 'jobs', held), await stateOf(suite.w.base, 'jobs', marker)]).toEqual(['que', 'que']);
    await page.reload();
    await settled(page);
    expect(await page.locator('#flash-notice').count()).toBe(0);
    expect(await page.locator('#queue-status').textContent()).toBe('PAUSE');
    expect(await page.locator('#count-que').textContent()).toBe('2');
    expect(await page.locator(`#message-rows tr[data-msg-id="${held}"][data-state="que"]`).count()).toBe(1);
    await page.locator('#config summary').click();
    await screenshot(page, 'queue-paused');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'queue-paused-phone');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 800 });

    await follow(page, '#btn-resume');
    expect(new URL(page.url()).pathname).toBe('/q/jobs');
    expect(await page.locator('#flash-notice').textContent()).toBe('Queue jobs resumed');
    expect(await page.locator('#queue-status').textContent()).toBe('UP');
    await waitState(suite.w.base, 'jobs', held, ['done']);
    await waitState(suite.w.base, 'jobs', marker, ['done']);

    expect(suite.b.dialogs).toEqual([]);
    expect(suite.b.problems).toEqual([]);
    await page.close();
  });

  it("keeps the operator's click when the page's live look finds the status it changed", async () => {
    const page = await suite.b.newPage();
    await page.goto(`${suite.w.base}/q/jobs`);
    await settled(page);
    expect(await page.locator('#queue-status').textContent()).toBe('UP');
    // The Pause reaches rq at once, but its answer is held until the page, told of the new status by its
    // stream, has looked again: a page that reloaded then would abort the form's request and lose its answer.
    let looked!: () => void;
    const lookSeen = new Promise<void>((resolve) => (looked = resolve));
    page.on('request', (r) => {
      if (r.resourceType() === 'fetch' && r.method() === 'GET' && new URL(r.url()).pathname === '/q/jobs') looked();
    });
    await page.route('**/q/jobs/adminoper', async (route) => {
      const answer = await route.fetch({ maxRedirects: 0 });
      await lookSeen;
      await route.fulfill({ response: answer });
    });
    await follow(page, '#btn-pause');
    // Read without waiting: a reloaded page has no flash, and would have it never.
    expect(await page.locator('#flash-notice').allTextContents()).toEqual(['Queue jobs paused']);
    expect(await page.locator('#queue-status').textContent()).toBe('PAUSE');
    await page.unroute('**/q/jobs/adminoper');
    await follow(page, '#btn-resume');
    expect(await page.locator('#queue-status').textContent()).toBe('UP');
    expect(suite.b.problems).toEqual([]);
    await page.close();
  });
});
