// Browser: a message created from the form, then its page's embedded live tail: ANSI colours as styled spans, HTML as text, the end notice.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { stateOf } from '../web/web-root.js';
import { screenshot } from './browser-session.js';
import { browserSuite } from './browser-suite.js';

const suite = browserSuite(['paint']);

describe('new message form and live tail in a browser', () => {
  it('creates a message from the form, shows coloured output while it runs and stops at done', async () => {
    const gate = path.join(suite.w.root, 'gate-colour');
    const page = await suite.b.newPage();
    await page.goto(`${suite.w.base}/q/paint/new_message`);
    expect(await page.title()).toBe('RQ :: paint');
    expect(await page.locator('#mesg_dest').inputValue()).toBe('/q/paint');
    expect(await page.locator('#mesg_method_commit').isChecked()).toBe(true);
    await page.locator('#mesg_param1').fill('colour');
    await page.locator('#mesg_param2').fill(gate);
    await screenshot(page, 'new-message-form');

    // Post/Redirect/Get: the form leads to the new message's page, the flash naming it.
    await Promise.all([page.waitForURL(/\/q\/paint\/\d{8}\.\d{4}\.\d{2}\.\d{3}\.\d+$/), page.locator('#btn-send-message').click()]);
    expect(await page.locator('#flash-notice').textContent()).toMatch(/^Created message http:\/\/.+\/q\/paint\/\d{8}\.\d{4}\.\d{2}\.\d{3}\.\d+$/);
    const id = new URL(page.url()).pathname.split('/').pop()!;
    expect(await page.locator('#message-id').textContent()).toBe(id);
    expect((await page.locator('#field-param1').textContent())?.trim()).toBe('colour');

    const tail = page.frameLocator('#tail-frame');
    const log = tail.locator('#tail-log');
    await expect.poll(() => log.textContent(), { timeout: 10_000 }).toContain('yellow');
    // The script is parked at its gate: this output arrived while the job runs, and the tail has not ended.
    expect(await stateOf(suite.w.base, 'paint', id)).toBe('run');
    expect(await log.getAttribute('data-ended')).toBeNull();
    expect(await tail.locator('#tail-status').textContent()).not.toMatch(/^ended/);

    const style = (text: string) =>
      log
        .locator('span', { hasText: text })
        .first()
        .evaluate((el) => {
          const s = getComputedStyle(el);
          return { cls: el.className, color: s.color, weight: s.fontWeight };
        });
    expect(await style('green line')).toMatchObject({ cls: 'ansi-green-fg', color: 'rgb(63, 185, 80)' });
    expect(await style('bold red line')).toMatchObject({ cls: 'ansi-red-fg', color: 'rgb(255, 123, 114)', weight: '700' });
    expect(await style('yellow')).toMatchObject({ cls: 'ansi-yellow-fg', color: 'rgb(210, 153, 34)' });
    // Markup written by the script is text; escape sequences do not leak through.
    const text = (await log.textContent())!;
    expect(text).toContain('<b>not bold</b>');
    expect(text).toContain('bold red line & yellow');
    expect(text).not.toContain('\u001b');
    expect(await log.locator('b').count()).toBe(0);
    expect(await log.locator('a').getAttribute('href')).toBe('https://example.com/x?a=1&b=2');
    await screenshot(page, 'message-running');

    await fs.writeFile(gate, '');
    await expect.poll(() => tail.locator('#tail-status').textContent(), { timeout: 10_000 }).toBe('ended: done - colours shown');
    expect(await log.getAttribute('data-ended')).toBe('done');
    // Blue must stay readable on the black log (ansi_up's own 0,0,187 was not).
    expect(await style('blue after gate')).toMatchObject({ cls: 'ansi-blue-fg', color: 'rgb(88, 166, 255)' });
    expect(await tail.locator('#tail-status').getAttribute('class')).toContain('ended');
    await page.reload();
    expect((await page.locator('#field-state').textContent())?.trim()).toBe('done');
    expect(await page.locator('#message-state').getAttribute('data-state')).toBe('done');
    expect((await page.locator('#field-status').textContent())?.trim()).toBe('done - colours shown');
    await expect.poll(() => tail.locator('#tail-status').textContent(), { timeout: 10_000 }).toBe('ended: done - colours shown');
    await screenshot(page, 'message-done');

    // The full tail page replays the whole log of a finished job and ends at once.
    const full = await suite.b.newPage();
    await full.goto(`${suite.w.base}/q/paint/${id}/tailviewlog/stdio.log`);
    await expect.poll(() => full.locator('#tail-status').textContent(), { timeout: 10_000 }).toBe('ended: done - colours shown');
    const fullText = (await full.locator('#tail-log').textContent())!;
    expect(fullText).toContain('green line');
    expect(fullText).toContain('blue after gate');
    expect(await full.locator('#tail-raw').getAttribute('href')).toBe(`/q/paint/${id}/log/stdio.log`);
    await screenshot(full, 'tail-page');

    expect(suite.b.dialogs).toEqual([]);
    expect(suite.b.problems).toEqual([]);
    await full.close();
    await page.close();
  });
});
