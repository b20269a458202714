// Browser: the message page follows its message on GET /events — the status line (page and tail) as the script reports each progress line, then state, outcome colour, actions and timeline when the run ends — at 1280 and 375 px, light and dark.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { send } from '../web/web-root.js';
import { LOOKS, docScreenshot, overflowsSideways, pageIn } from './browser-session.js';
import { browserSuite } from './browser-suite.js';

const suite = browserSuite(['live']);

/** Resolves when the element's text is `text` (the spaces around a field's value aside): the page changed it, nothing here waits on a clock. */
function textIs(page: Page, selector: string, text: string): Promise<unknown> {
  return page.waitForFunction(([s, t]) => document.querySelector(s)?.textContent?.trim() === t, [selector, text] as const, { timeout: 15_000 });
}

/** The same, inside the embedded tail (its own document). */
async function tailStatusIs(page: Page, text: string): Promise<void> {
  const frame = page.frame({ url: /tailviewlog/ });
  if (!frame) throw new Error('no tail frame');
  await frame.waitForFunction((t) => document.getElementById('tail-status')?.textContent === t, text, { timeout: 15_000 });
}

/** The colour a CSS variable of the page's stylesheet resolves to, as computed styles report colours. */
function colourOf(page: Page, variable: string): Promise<string> {
  return page.evaluate((v) => {
    const probe = document.createElement('span');
    probe.style.color = `var(${v})`;
    document.body.append(probe);
    const c = getComputedStyle(probe).color;
    probe.remove();
    return c;
  }, variable);
}

const colour = (page: Page, selector: string) =>
  page
    .locator(selector)
    .first()
    .evaluate((el) => getComputedStyle(el).color);

describe('the message page is live over GET /events', () => {
  for (const look of LOOKS) {
    it(`${look.name}: progress lines as they come, then done in green and err in red, with the timeline`, async () => {
      const page = await pageIn(suite.b, look);
      const pageFetches: string[] = [];
      page.on('request', (r) => {
        if (r.resourceType() === 'fetch') pageFetches.push(new URL(r.url()).pathname);
      });
      const gate = path.join(suite.w.root, `gate-${look.name}`);
      const id = await send(suite.w.base, 'live', { param1: 'progress', param2: gate });
      await page.goto(`${suite.w.base}/q/live/${id}`);
      await page.waitForSelector('body[data-live="open"]');

      await textIs(page, '#field-status', 'run - step 1 of 3');
      await tailStatusIs(page, 'run - step 1 of 3');
      // The look after the stream's `ready` (and after the move to run, if the page was loaded before it) is over.
      await page.waitForSelector('body[data-settled="true"] #message-state[data-state="run"]');
      expect(await colour(page, '#message-state')).toBe(await colourOf(page, '--st-run'));
      // The progress line comes in the event itself: nothing is fetched for it.
      const fetchesBefore = pageFetches.length;
      await fs.writeFile(`${gate}.1`, '');
      await textIs(page, '#field-status', 'run - step 2 of 3');
      await tailStatusIs(page, 'run - step 2 of 3');
      expect(pageFetches.slice(fetchesBefore)).toEqual([]);
      await page.frame({ url: /tailviewlog/ })!.waitForFunction(() => document.getElementById('tail-log')?.textContent?.includes('working on step 2'));
      expect(await overflowsSideways(page)).toBe(false);
      await docScreenshot(page, 'message-live', look);

      await fs.writeFile(`${gate}.2`, '');
      await fs.writeFile(`${gate}.3`, '');
      // The end of the run: state, status, actions and timeline are fetched again, once per burst of moves.
      await page.waitForSelector('#message-state[data-state="done"]', { timeout: 15_000 });
      await textIs(page, '#field-status', 'done - all 3 steps');
      expect(await colour(page, '#message-state')).toBe(await colourOf(page, '--st-done'));
      expect(await colour(page, '#field-state .state-text')).toBe(await colourOf(page, '--st-done'));
      expect(await page.locator('#btn-destroy').count()).toBe(0);
      expect(await page.locator('#btn-clone').count()).toBe(1);
      expect(await page.locator('#timeline li.step.to-done .t-step').textContent()).toBe('run → done');
      const green = await colourOf(page, '--st-done');
      await expect.poll(() => colour(page, '#timeline li.step.to-done .t-step')).toBe(green);
      await page.frame({ url: /tailviewlog/ })!.waitForSelector('#tail-status.state-done');
      expect(pageFetches.every((p) => p === `/q/live/${id}`)).toBe(true);

      // An err run ends red, never green, on the page and in the tail.
      const bad = await send(suite.w.base, 'live', { param1: 'progress', param2: `${gate}-bad`, param3: 'fail' });
      await page.goto(`${suite.w.base}/q/live/${bad}`);
      await page.waitForSelector('body[data-live="open"]');
      await textIs(page, '#field-status', 'run - step 1 of 3');
      for (const step of [1, 2, 3]) await fs.writeFile(`${gate}-bad.${step}`, '');
      await page.waitForSelector('#message-state[data-state="err"]', { timeout: 15_000 });
      const red = await colourOf(page, '--st-err');
      expect(red).not.toBe(await colourOf(page, '--st-done'));
      expect(await colour(page, '#message-state')).toBe(red);
      // The live page redraws its timeline on the move: a step read while it is replaced has no style yet.
      await expect.poll(() => colour(page, '#timeline li.step.to-err .t-step')).toBe(red);
      expect(await page.locator('#btn-requeue').count()).toBe(1);
      const tail = page.frame({ url: /tailviewlog/ })!;
      await tail.waitForSelector('#tail-status.state-err');
      expect(await tail.locator('#tail-status').evaluate((el) => getComputedStyle(el).color)).toBe('rgb(255, 123, 114)');
      expect(await overflowsSideways(page)).toBe(false);
      await docScreenshot(page, 'message-err', look);
      await page.close();
      expect(suite.b.problems).toEqual([]);
    }, 60_000);
  }
});
