// Browser: forms and layout at 1280 and 375 px, light and dark — Post/Redirect/Get (new message, a refused Run), due time and attachments on the new-message form, confirmations, flash texts in words, relative times, no sideways overflow, the system's colour scheme.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { send, waitState } from '../web/web-root.js';
import { LOOKS, type Look, docScreenshot, follow, overflowsSideways, pageIn, settled } from './browser-session.js';
import { browserSuite } from './browser-suite.js';

const suite = browserSuite(['forms']);

const queSize = async (): Promise<number> => (await (await fetch(`${suite.w.base}/q/forms.json`)).json()).que_size;
const flash = (page: Page, kind: 'notice' | 'error') => page.locator(`#flash-${kind}`).textContent();

/** Relative luminance of the page background (0 black … 1 white). */
function backgroundLuminance(page: Page): Promise<number> {
  return page.evaluate(() => {
    const [r, g, b] = getComputedStyle(document.body).backgroundColor.match(/\d+/g)!.map(Number);
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
  });
}

async function checkLook(page: Page, look: Look): Promise<void> {
  const lum = await backgroundLuminance(page);
  if (look.scheme === 'dark') expect(lum).toBeLessThan(0.25);
  else expect(lum).toBeGreaterThan(0.7);
  expect(await overflowsSideways(page)).toBe(false);
}

describe('forms and layout', () => {
  for (const look of LOOKS) {
    it(`${look.name}: new message with due time and attachment, PRG, confirmations, flashes, relative times`, async () => {
      const page = await pageIn(suite.b, look);
      await page.goto(`${suite.w.base}/`);
      await settled(page);
      await checkLook(page, look);
      await docScreenshot(page, 'dashboard', look);

      // The new-message form: a due time an hour ahead, a file, a word far wider than a phone.
      await page.goto(`${suite.w.base}/q/forms/new_message`);
      await settled(page);
      await checkLook(page, look);
      await docScreenshot(page, 'new-message', look);
      const word = 'x'.repeat(240);
      await page.fill('#mesg_param1', 'echo');
      await page.fill('#mesg_param2', word);
      const due = await page.evaluate(() => {
        const d = new Date(Date.now() + 3600_000);
        const p = (n: number) => String(n).padStart(2, '0');
        const value = `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
        return { value, epoch: Math.floor(new Date(value).getTime() / 1000) };
      });
      await page.fill('#due_at', due.value);
      await page.setInputFiles('#filedata', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('attached from the form\n') });
      const before = await queSize();
      await follow(page, '#btn-send-message');
      // Post/Redirect/Get: the new message's own page, with the flash.
      expect(new URL(page.url()).pathname).toMatch(/^\/q\/forms\/\d{8}\.\d{4}\.\d{2}\.\d{3}\.\d+$/);
      expect(await flash(page, 'notice')).toMatch(/^Created message http:\/\/.+\/q\/forms\//);
      expect(await page.locator('#message-state').getAttribute('data-state')).toBe('que');
      expect((await page.locator('#field-due').textContent())?.trim()).toMatch(new RegExp(`^${due.epoch} `));
      expect(await page.locator('#attachments tr[data-attachment="notes.txt"]').count()).toBe(1);
      await checkLook(page, look);
      expect(await queSize()).toBe(before + 1);
      await page.reload();
      await settled(page);
      expect(await queSize()).toBe(before + 1);
      const dueId = new URL(page.url()).pathname.split('/').pop()!;

      // A due time that does not exist: back to the form, the refusal as a flash, what was typed filled in again.
      await page.goto(`${suite.w.base}/q/forms/new_message`);
      await settled(page);
      await page.fill('#mesg_param1', 'kept');
      await page.evaluate(() => {
        const input = document.getElementById('due_at') as HTMLInputElement;
        input.type = 'text';
        input.value = '2026-02-30T10:00';
      });
      await follow(page, '#btn-send-message');
      expect(new URL(page.url()).pathname).toBe('/q/forms/new_message');
      expect(await flash(page, 'error')).toContain('due_at: expected a date and time such as 2026-11-21T20:00');
      expect(await page.inputValue('#mesg_param1')).toBe('kept');
      expect(await queSize()).toBe(before + 1);

      // Run on a done message: a flash on its page, not a text page.
      const done = await send(suite.w.base, 'forms', { param1: 'echo', param2: 'hi' });
      await waitState(suite.w.base, 'forms', done, ['done']);
      await page.goto(`${suite.w.base}/q/forms/${done}`);
      await settled(page);
      await follow(page, '#btn-run-now');
      expect(new URL(page.url()).pathname).toBe(`/q/forms/${done}`);
      expect(await flash(page, 'error')).toBe('409 - Couldn\'t run message. ["fail", "msg not in runnable state"].');

      // Destructive buttons ask first; a refused prompt sends nothing.
      await page.goto(`${suite.w.base}/q/forms/${dueId}`);
      await settled(page);
      for (const b of ['#btn-cancel', '#btn-delete'])
        expect(await page.locator(b).evaluate((el) => el.closest('form')!.dataset.confirm)).toMatch(/ message \d{8}\./);
      const asked = suite.b.dialogs.length;
      await page.click('#btn-cancel');
      expect(suite.b.dialogs.slice(asked)).toEqual([`confirm: Cancel message ${dueId}?`]);
      expect(await page.locator('#message-state').getAttribute('data-state')).toBe('que');

      // The queue page: relative times in words, pause and down in words (down asks first).
      await follow(page, '#nav-queue');
      await follow(page, '#btn-pause');
      expect(await flash(page, 'notice')).toBe('Queue forms paused');
      const late = await send(suite.w.base, 'forms', { param1: 'echo', due: Math.floor(Date.now() / 1000) - 90 });
      await page.reload();
      await settled(page);
      expect(await page.locator(`tr[data-msg-id="${dueId}"] .due`).textContent()).toMatch(/^in (59|60) mins$/);
      expect(await page.locator(`tr[data-msg-id="${late}"] .due`).textContent()).toMatch(/^\d+ secs ago$/);
      expect(await page.content()).not.toContain('in -');
      await checkLook(page, look);
      await docScreenshot(page, 'queue', look);
      const downAsked = suite.b.dialogs.length;
      await page.click('#btn-down');
      expect(suite.b.dialogs.slice(downAsked)).toEqual(['confirm: Take queue forms down? It refuses new messages and starts none until it is up again.']);
      await page.evaluate(() => (window.confirm = () => true));
      await follow(page, '#btn-down');
      expect(await flash(page, 'notice')).toBe('Queue forms stopped');
      await follow(page, '#btn-up');
      expect(await flash(page, 'notice')).toBe('Queue forms started');
      await follow(page, '#btn-resume');
      expect(await flash(page, 'notice')).toBe('Queue forms resumed');

      // With the prompt accepted, delete goes through.
      await page.goto(`${suite.w.base}/q/forms/${dueId}`);
      await settled(page);
      await page.evaluate(() => (window.confirm = () => true));
      await follow(page, '#btn-delete');
      expect(await flash(page, 'notice')).toBe('Message deleted successfully');
      await page.close();
      expect(suite.b.problems).toEqual([]);
    }, 90_000);
  }
});
