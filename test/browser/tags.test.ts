// Browser: tagging from the message page (form, chips, Track toggle), the tag view, cancel_tagged behind its confirm, the form's tags field, and the dashboard's live #tracked.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { send, stateOf } from '../web/web-root.js';
import { screenshot } from './browser-session.js';
import { browserSuite } from './browser-suite.js';

const suite = browserSuite(['jobs', 'more']);
const later = () => Math.floor(Date.now() / 1000) + 3600;
const chips = (page: Page) => page.locator('#tag-chips a.tag-chip').allTextContents();
/** Clicks and waits for the page it leads to to load (a form posting back to its own URL included). */
const submit = async (page: Page, selector: string) => {
  await Promise.all([page.waitForEvent('load'), page.locator(selector).click()]);
};

describe('tags in a browser', () => {
  it('tags a message with #tag-form, tracks it, and follows a chip to the tag view and back', async () => {
    const id = await send(suite.w.base, 'jobs', { param1: 'noop', due: later() });
    const page = await suite.b.newPage();
    await page.goto(`${suite.w.base}/q/jobs/${id}`);
    expect(await page.locator('#tags-empty').textContent()).toBe('none');

    await page.locator('#tag-add').fill('alpha, beta');
    await submit(page, '#btn-tags');
    expect(await page.locator('#flash-notice').textContent()).toBe('Tags updated: alpha, beta');
    expect(await chips(page)).toEqual(['alpha', 'beta']);

    await submit(page, '#btn-track');
    expect(await chips(page)).toEqual(['alpha', 'beta', 'track']);
    expect(await page.locator('#btn-untrack').isVisible()).toBe(true);
    await page.locator('#tag-remove').fill('beta');
    await submit(page, '#btn-tags');
    expect(await chips(page)).toEqual(['alpha', 'track']);
    await screenshot(page, 'message-tags');

    await Promise.all([page.waitForURL(`${suite.w.base}/tags/alpha`), page.locator('#tag-chips a[data-tag="alpha"]').click()]);
    expect(await page.locator('#tagged-total').textContent()).toBe('1');
    const row = page.locator(`#tagged-table tr[data-ref="jobs/${id}"]`);
    expect(await row.locator('td.state').textContent()).toBe('que');
    await screenshot(page, 'tag-view');
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 800 });
    await Promise.all([page.waitForURL(`${suite.w.base}/q/jobs/${id}`), row.locator('td.msg a').click()]);
    expect(await page.locator('#message-id').textContent()).toBe(id);

    await submit(page, '#btn-untrack');
    expect(await chips(page)).toEqual(['alpha']);
    expect(suite.b.dialogs).toEqual([]);
    expect(suite.b.problems).toEqual([]);
    await page.close();
  });

  it('cancel_tagged asks first: dismissed it changes nothing, accepted it cancels the tagged messages', async () => {
    const ids = [
      await send(suite.w.base, 'jobs', { param1: 'noop', due: later(), tags: 'batch' }),
      await send(suite.w.base, 'jobs', { param1: 'noop', due: later(), tags: 'batch' }),
    ];
    const page = await suite.b.newPage();
    await page.goto(`${suite.w.base}/q/jobs/tags/batch`);
    await page.locator('#cancel-tagged-reason').fill('stop the batch');
    // The harness dismisses every dialog.
    await page.locator('#btn-cancel-tagged').click();
    await expect.poll(() => suite.b.dialogs).toEqual(['confirm: Cancel every prep, queued and running message of jobs tagged batch?']);
    expect(page.url()).toBe(`${suite.w.base}/q/jobs/tags/batch`);
    for (const id of ids) expect(await stateOf(suite.w.base, 'jobs', id)).toBe('que');

    page.removeAllListeners('dialog');
    page.on('dialog', (d) => void d.accept());
    await submit(page, '#btn-cancel-tagged');
    expect(page.url()).toBe(`${suite.w.base}/q/jobs/tags/batch`);
    expect(await page.locator('#flash-notice').textContent()).toBe('2 messages cancelled');
    for (const id of ids) {
      expect(await stateOf(suite.w.base, 'jobs', id)).toBe('err');
      expect(await page.locator(`#tagged-table tr[data-ref="jobs/${id}"] td.status`).textContent()).toBe('err - CANCELLED - stop the batch');
    }
    suite.b.dialogs.length = 0;
    expect(suite.b.problems).toEqual([]);
    await page.close();
  });

  it('sends tags from the new-message form', async () => {
    const page = await suite.b.newPage();
    await page.goto(`${suite.w.base}/q/jobs/new_message`);
    await page.locator('#mesg_param1').fill('noop');
    await page.locator('#mesg_tags').fill('from-form,track');
    await submit(page, '#btn-send-message');
    // Post/Redirect/Get: the form leads straight to the new message's page.
    await page.waitForURL(/\/q\/jobs\/\d{8}\./);
    expect(await chips(page)).toEqual(['from-form', 'track']);
    await page.close();
  });

  it("the dashboard's #tracked follows the tracked messages' state live, without a reload", async () => {
    await suite.w.mgr.cmd('pause_queue', 'more');
    const first = await send(suite.w.base, 'more', { param1: 'noop', tags: 'track' });
    const page = await suite.b.newPage();
    await page.goto(`${suite.w.base}/`);
    const state = (id: string) => page.locator(`#tracked tr[data-ref="more/${id}"] td.state`);
    expect(await state(first).textContent()).toBe('que');
    await page.evaluate(() => ((window as unknown as { rqMark: string }).rqMark = 'same page'));

    // A message tracked after the page loaded shows up, newest first.
    const second = await send(suite.w.base, 'more', { param1: 'noop', tags: 'track' });
    await expect
      .poll(() => page.locator('#tracked-table tbody tr').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.ref)), { timeout: 10_000 })
      .toContain(`more/${second}`);
    const order = await page.locator('#tracked-table tbody tr').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.ref));
    expect(order.indexOf(`more/${second}`)).toBeLessThan(order.indexOf(`more/${first}`));

    await suite.w.mgr.cmd('resume_queue', 'more');
    for (const id of [first, second]) await expect.poll(() => state(id).textContent(), { timeout: 15_000 }).toBe('done');
    expect(await page.locator(`#tracked tr[data-ref="more/${first}"] td.msg a`).getAttribute('href')).toBe(`/q/more/${first}`);
    expect(await page.evaluate(() => (window as unknown as { rqMark?: string }).rqMark)).toBe('same page');
    await screenshot(page, 'dashboard-tracked');
    expect(suite.b.problems).toEqual([]);
    await page.close();
  });
});
