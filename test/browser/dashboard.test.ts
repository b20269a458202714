// Browser: the dashboard shows the supervisor state and queue table, and its counts follow the queues without a reload.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { send } from '../web/web-root.js';
import { screenshot } from './browser-session.js';
import { browserSuite } from './browser-suite.js';

const background = (page: Page, sel: string) => page.locator(sel).evaluate((el) => getComputedStyle(el).backgroundColor);

const suite = browserSuite(['work', 'test']);

describe('dashboard in a browser', () => {
  it('shows QUEUE MGR is OPERATIONAL and every queue with its counts', async () => {
    const page = await suite.b.newPage();
    await page.goto(`${suite.w.base}/`);
    await expect.poll(() => page.locator('#mgr-state').textContent(), { timeout: 5000 }).toContain('QUEUE MGR is OPERATIONAL');
    const heads = await page.locator('#queue-table thead th').allTextContents();
    expect(heads).toEqual(['NAME', 'PREP', 'QUEUE', 'RUN', 'ERR', 'DONE', 'RELAYED', 'PID', 'UPTIME', 'STATUS']);
    for (const q of ['work', 'test']) {
      await expect.poll(() => page.locator(`#q-${q}-status`).textContent(), { timeout: 5000 }).toBe('UP');
      expect(await page.locator(`#q-${q} td.name a`).getAttribute('href')).toBe(`/q/${q}`);
    }
    await screenshot(page, 'dashboard');
    // The operator UI is also used from a phone.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await screenshot(page, 'dashboard-phone');
    expect(suite.b.problems).toEqual([]);
    await page.close();
  });

  it('updates the counts live, without reloading, after a message is sent through the API', async () => {
    // Paused, so the message stays in que and the count is stable to look at.
    await suite.w.mgr.cmd('pause_queue', 'work');
    const page = await suite.b.newPage();
    await page.goto(`${suite.w.base}/`);
    await expect.poll(() => page.locator('#q-work-status').textContent(), { timeout: 10_000 }).toBe('PAUSE');
    expect(await page.locator('#q-work-que').textContent()).toBe('0');
    // A reload would drop this mark.
    await page.evaluate(() => ((window as unknown as { rqMark: string }).rqMark = 'same page'));

    await send(suite.w.base, 'work', { param1: 'noop' });
    await send(suite.w.base, 'work', { param1: 'noop' });
    // The dashboard refetches its counts when GET /events tells of the creates.
    await expect.poll(() => page.locator('#q-work-que').textContent(), { timeout: 10_000 }).toBe('2');
    expect(await page.locator('#q-work-que').getAttribute('class')).toBe('count busy');
    // §9.4 colours: >0 is yellow, also on a shaded (odd) row.
    expect(await page.locator('#q-work').getAttribute('class')).toContain('odd');
    expect(await background(page, '#q-work-que')).toBe('rgb(255, 242, 168)');
    expect(await background(page, '#q-work-done')).not.toBe('rgb(216, 243, 220)');
    expect(await page.evaluate(() => (window as unknown as { rqMark?: string }).rqMark)).toBe('same page');

    // And back to zero once the queue runs them.
    await suite.w.mgr.cmd('resume_queue', 'work');
    await expect.poll(() => page.locator('#q-work-done').textContent(), { timeout: 15_000 }).toBe('2');
    expect(await page.locator('#q-work-que').textContent()).toBe('0');
    expect(await page.locator('#q-work-status').textContent()).toBe('UP');
    expect(await background(page, '#q-work-done')).toBe('rgb(216, 243, 220)');
    expect(await page.evaluate(() => (window as unknown as { rqMark?: string }).rqMark)).toBe('same page');
    await screenshot(page, 'dashboard-live');
    expect(suite.b.problems).toEqual([]);
    await page.close();
  });
});
