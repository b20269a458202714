// Browser: a queue of 5,000 messages is paged on the server; its last page is reached from the first, and the page size and state filter work from the form.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fillQueue } from '../helpers/fill-queue.js';
import { type WebRoot, startWebRoot } from '../web/web-root.js';
import { type BrowserSession, screenshot, startBrowser } from './browser-session.js';

const N = 5000;
let w: WebRoot;
let b: BrowserSession;
let ids: string[];

beforeAll(async () => {
  w = await startWebRoot({
    queues: { test: {} },
    setup: async (root) =>
      void (ids = await fillQueue(root, 'big', N, { state: (i) => (i % 10 === 0 ? 'err' : 'done'), fields: (i) => ({ param1: `job-${i}` }) })),
  });
  b = await startBrowser();
}, 120_000);
afterAll(async () => {
  await b?.close();
  await w?.stop();
});

describe('the message list of a large queue in a browser', () => {
  it('goes from the first page to the last and back, 50 rows a page', async () => {
    const page = await b.newPage();
    await page.goto(`${w.base}/q/big`);
    expect(await page.locator('#page-range').textContent()).toBe('1–50 of 5,000');
    expect(await page.locator('#message-rows tr').count()).toBe(50);
    expect(await page.locator('#count-all').textContent()).toBe('5,000');
    await Promise.all([page.waitForURL(/offset=4950/), page.locator('#page-last').click()]);
    expect(await page.locator('#page-range').textContent()).toBe('4,951–5,000 of 5,000');
    // Newest first: the last page ends with the first message made.
    expect(await page.locator('#message-rows tr').last().getAttribute('data-msg-id')).toBe(ids[0]);
    expect(await page.locator('#page-next').getAttribute('aria-disabled')).toBe('true');
    await screenshot(page, 'queue-list-last-page');
    await Promise.all([page.waitForURL(/offset=4900/), page.locator('#page-prev').click()]);
    expect(await page.locator('#page-range').textContent()).toBe('4,901–4,950 of 5,000');
    await page.close();
  });

  it('filters to a state and takes 500 a page from the form', async () => {
    const page = await b.newPage();
    await page.goto(`${w.base}/q/big`);
    await Promise.all([page.waitForURL(/state=err/), page.locator('#col-err').click()]);
    expect(await page.locator('#page-range').textContent()).toBe('1–50 of 500');
    await page.locator('#list-limit').selectOption('500');
    await Promise.all([page.waitForURL(/limit=500/), page.locator('#btn-search').click()]);
    expect(await page.locator('#page-range').textContent()).toBe('1–500 of 500');
    expect(await page.locator('#message-rows tr[data-state="err"]').count()).toBe(500);
    await page.close();
    expect(b.problems).toEqual([]);
  });
});
