// Browser: the dashboard's live #limits across queues, the message page's Dependencies card (links both ways, undepend behind confirmations), the waiting reason in words, the queue page's breakdown, and the form's Advanced dependency and limit fields.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { send, stateOf } from '../web/web-root.js';
import { screenshot } from './browser-session.js';
import { browserSuite } from './browser-suite.js';

const suite = browserSuite(['jobs', 'more']);
const later = () => Math.floor(Date.now() / 1000) + 3600;
/** Clicks and waits for the page it leads to to load (a form posting back to its own URL included). */
const submit = async (page: Page, selector: string) => {
  await Promise.all([page.waitForEvent('load'), page.locator(selector).click()]);
};
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const message = async (q: string, id: string): Promise<any> => (await fetch(`${suite.w.base}/q/${q}/${id}.json`)).json();

describe('dependencies and limits in a browser', () => {
  it("the dashboard's #limits follows a key shared by two queues live: in use, a waiter, then gone, without a reload", async () => {
    const page = await suite.b.newPage();
    await page.goto(`${suite.w.base}/`);
    expect(await page.locator('#limits-empty').textContent()).toBe('No concurrency keys in use.');
    await page.evaluate(() => ((window as unknown as { rqMark: string }).rqMark = 'same page'));
    const cell = (c: string) => page.locator(`#limits-table tr[data-key="shared:b"] td.${c}`);

    // `colour` holds its run until the gate file exists; the key's concurrency comes with the message.
    const gate = path.join(suite.w.root, 'limits-gate');
    const holder = await send(suite.w.base, 'jobs', { param1: 'colour', param2: gate, limit: 'shared:{param3}', param3: 'b', limit_concurrency: 1 });
    await expect.poll(() => cell('in-use').textContent(), { timeout: 10_000 }).toBe('1/1');
    expect(await cell('in-use').getAttribute('class')).toBe('in-use num busy');
    expect(await cell('waiting').textContent()).toBe('0');
    expect(await cell('orphaned').textContent()).toBe('0');
    expect(await cell('source').textContent()).toBe('message');
    // Outside a fleet the table has no SCOPE column (test/fleet/fleet-limits.test.ts shows it on a fleet's key).
    expect(await page.locator('#limits-table th').allTextContents()).toEqual(['KEY', 'IN USE', 'WAITING', 'ORPHANED', 'SOURCE']);

    // Another queue's message with the same key waits for the slot.
    const waiter = await send(suite.w.base, 'more', { param1: 'noop', limit: 'shared:b', limit_concurrency: 1 });
    await expect.poll(() => cell('waiting').textContent(), { timeout: 10_000 }).toBe('1');
    const other = await suite.b.newPage();
    await other.goto(`${suite.w.base}/q/more/${waiter}`);
    expect((await other.locator('#field-waiting').textContent())?.trim()).toBe('waiting for a slot of key shared:b, position 1');
    await other.goto(`${suite.w.base}/q/more`);
    expect(await other.locator('#waiting-limit-count').textContent()).toBe('1');
    await other.close();
    await screenshot(page, 'dashboard-limits');

    await fs.writeFile(gate, '');
    await expect.poll(() => page.locator('#limits-empty').isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await stateOf(suite.w.base, 'jobs', holder)).toBe('done');
    await expect.poll(() => stateOf(suite.w.base, 'more', waiter), { timeout: 10_000 }).toBe('done');
    expect(await page.evaluate(() => (window as unknown as { rqMark?: string }).rqMark)).toBe('same page');
    expect(suite.b.problems).toEqual([]);
    await page.close();
  });

  it('the message page links dependencies and dependents both ways, and undepends behind a confirmation: dismissed nothing changes, accepted it goes', async () => {
    const [x1, x2] = [await send(suite.w.base, 'jobs', { param1: 'noop', due: later() }), await send(suite.w.base, 'jobs', { param1: 'noop', due: later() })];
    const d = await send(suite.w.base, 'more', { param1: 'noop', depends: [`jobs/${x1}`, `jobs/${x2}`], depends_fail: 'run' });
    const page = await suite.b.newPage();
    await page.goto(`${suite.w.base}/q/more/${d}`);
    expect((await page.locator('#field-waiting').textContent())?.trim()).toBe(`waiting on 2 dependencies: jobs/${x1}, jobs/${x2}`);
    expect(await page.locator('#depends-fail').textContent()).toBe('run');
    expect(await page.locator('#depends-table tbody tr').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.ref))).toEqual([
      `jobs/${x1}`,
      `jobs/${x2}`,
    ]);
    expect(await page.locator(`#depends-table tr[data-ref="jobs/${x1}"] td.state`).textContent()).toBe('awaited');

    // To the dependency and back through its Dependents.
    await Promise.all([page.waitForURL(`${suite.w.base}/q/jobs/${x1}`), page.locator(`#depends-table tr[data-ref="jobs/${x1}"] td.ref a`).click()]);
    expect(await page.locator('#dependents a.ref').textContent()).toBe(`more/${d}`);
    await Promise.all([page.waitForURL(`${suite.w.base}/q/more/${d}`), page.locator('#dependents a.ref').click()]);
    await screenshot(page, 'message-dependencies');

    // The harness dismisses every dialog: nothing is sent.
    await page.locator(`#depends-table tr[data-ref="jobs/${x1}"] button`).click();
    await expect.poll(() => suite.b.dialogs).toEqual([`confirm: Stop waiting for jobs/${x1}?`]);
    expect(page.url()).toBe(`${suite.w.base}/q/more/${d}`);
    expect((await message('more', d)).depends).toEqual([`jobs/${x1}`, `jobs/${x2}`]);

    page.removeAllListeners('dialog');
    page.on('dialog', (dialog) => void dialog.accept());
    await submit(page, `#depends-table tr[data-ref="jobs/${x1}"] button`);
    expect(page.url()).toBe(`${suite.w.base}/q/more/${d}`);
    expect(await page.locator('#flash-notice').textContent()).toBe(`Still waiting on jobs/${x2}`);
    expect(await page.locator('#depends-table tbody tr').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.ref))).toEqual([`jobs/${x2}`]);
    expect((await page.locator('#field-waiting').textContent())?.trim()).toBe(`waiting on 1 dependency: jobs/${x2}`);

    await submit(page, '#btn-undepend-all');
    expect(await page.locator('#flash-notice').textContent()).toBe('No longer waiting on dependencies');
    await expect.poll(() => stateOf(suite.w.base, 'more', d), { timeout: 10_000 }).toBe('done');
    suite.b.dialogs.length = 0;
    for (const x of [x1, x2]) await fetch(`${suite.w.base}/q/jobs/${x}/cancel`, { method: 'POST', body: new URLSearchParams({ x_format: 'json' }) });
    expect(suite.b.problems).toEqual([]);
    await page.close();
  });

  it("sends depends, depends_fail, limit and limit_concurrency from the form's Advanced fieldset; the queue page counts the message as waiting on dependencies", async () => {
    const x = await send(suite.w.base, 'jobs', { param1: 'noop', due: later() });
    const page = await suite.b.newPage();
    await page.goto(`${suite.w.base}/q/more/new_message`);
    expect(await page.locator('#mesg_depends').isVisible()).toBe(false);
    await page.locator('#mesg_advanced summary').click();
    await page.locator('#mesg_param1').fill('noop');
    await page.locator('#mesg_depends').fill(`jobs/${x}`);
    await page.locator('#mesg_depends_fail').selectOption('wait');
    await page.locator('#mesg_limit').fill('form:{queue}');
    await page.locator('#mesg_limit_concurrency').fill('2');
    await submit(page, '#btn-send-message');
    // Post/Redirect/Get: the form leads straight to the new message's page.
    await page.waitForURL(/\/q\/more\/\d{8}\./);
    const id = decodeURIComponent(page.url().split('/').pop()!);
    expect(await message('more', id)).toMatchObject({ depends: [`jobs/${x}`], depends_fail: 'wait', limit: 'form:{queue}', limit_concurrency: 2 });
    expect(await page.locator('#depends-fail').textContent()).toBe('wait');
    expect((await page.locator('#field-waiting').textContent())?.trim()).toBe(`waiting on 1 dependency: jobs/${x}`);

    await page.goto(`${suite.w.base}/q/more`);
    expect(await page.locator('#waiting-dependencies-count').textContent()).toBe('1');
    expect(await page.locator('#waiting-dependencies').getAttribute('href')).toBe('/q/more/waiting.json?reason=dependencies');
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 800 });
    for (const [q, m] of [
      ['more', id],
      ['jobs', x],
    ])
      await fetch(`${suite.w.base}/q/${q}/${m}/cancel`, { method: 'POST', body: new URLSearchParams({ x_format: 'json' }) });
    expect(suite.b.problems).toEqual([]);
    await page.close();
  });
});
