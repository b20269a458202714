// Browser: what a new user meets, at 1280 and 375 px, light and dark — the queue page's attempts and durations,
// the message page's actions (no run-now while it runs, Cancel and Destroy explained) with its live tail above the
// fold, the dashboard's table showing that it scrolls on a phone, and /docs branded as rq.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { send, waitState } from '../web/web-root.js';
import { LOOKS, type Look, pageIn, settled } from './browser-session.js';
import { browserSuite } from './browser-suite.js';

const suite = browserSuite(['look']);

/** The look's page, as tall as a laptop's screen (1280×900) on the desktop. */
async function lookPage(look: Look): Promise<Page> {
  const page = await pageIn(suite.b, look);
  if (look.width === 1280) await page.setViewportSize({ width: 1280, height: 900 });
  return page;
}

describe('the queue page counts runs', () => {
  it('ATTEMPTS is the runs of a message done on attempt 3, DURATION all of them with the last in its title', async () => {
    const id = await send(suite.w.base, 'look', { param1: 'flaky', max_retries: 3, backoff_base: 1, retry_jitter: 0 });
    await waitState(suite.w.base, 'look', id, ['done'], {}, 30_000);
    for (const look of LOOKS) {
      const page = await lookPage(look);
      await page.goto(`${suite.w.base}/q/look?state=done`);
      const row = page.locator(`#message-rows tr[data-msg-id="${id}"]`);
      expect(await row.locator('td.status').innerText()).toBe('done - ok on attempt 3');
      expect(await row.locator('td.attempts').innerText()).toBe('3');
      expect(await row.locator('td.duration').getAttribute('title')).toMatch(/^3 runs; the last \d+ ms$/);
      const json = await (await fetch(`${suite.w.base}/q/look/messages.json?state=done`)).json();
      const listed = json.messages.find((m: { msg_id: string }) => m.msg_id === id);
      expect(listed).toMatchObject({ attempts: 3 });
      expect(listed.total_ms).toBeGreaterThan(listed.duration_ms);
      await page.close();
    }
  }, 60_000);
});

describe('the message page of a running message', () => {
  for (const look of LOOKS) {
    it(`${look.name}: no run-now, Cancel and Destroy explained, the live tail's top in the first screen`, async () => {
      const gate = path.join(suite.w.root, `look-gate-${look.name}`);
      const id = await send(suite.w.base, 'look', { param1: 'progress', param2: gate });
      await waitState(suite.w.base, 'look', id, ['run']);
      const page = await lookPage(look);
      await page.goto(`${suite.w.base}/q/look/${id}`);
      await settled(page);
      expect(await page.locator('#btn-run-now').count()).toBe(0);
      expect(await page.locator('#btn-cancel').getAttribute('title')).toMatch(/keeps the message in err, with its history/);
      expect(await page.locator('#btn-destroy').getAttribute('title')).toMatch(/removes the message.*for good/);
      const help = page.locator('#action-help');
      expect(await help.isVisible()).toBe(true);
      expect(await help.innerText()).toMatch(/Cancel: .*keeps the message in err.*Destroy: .*for good/s);
      const tail = await page.locator('#log-tail').boundingBox();
      if (look.width === 1280) expect(tail!.y, 'the tail starts above 900 px').toBeLessThan(900 - 40);
      // The tail comes before the fields and the timeline, whatever the width.
      const fields = await page.locator('#message-summary').boundingBox();
      expect(tail!.y).toBeLessThan(fields!.y);
      expect(await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)).toBe(false);
      for (const step of [1, 2, 3]) await fs.writeFile(`${gate}.${step}`, '');
      await waitState(suite.w.base, 'look', id, ['done']);
      await page.close();
    });
  }
});

describe('the dashboard on a phone', () => {
  for (const look of LOOKS) {
    it(`${look.name}: a table wider than the screen fades at the edge it scrolls to`, async () => {
      const page = await lookPage(look);
      await page.goto(`${suite.w.base}/`);
      const wrap = page.locator('.table-wrap', { has: page.locator('#queue-table') });
      await page.locator('#q-look').waitFor();
      const mask = () => wrap.evaluate((el) => getComputedStyle(el).maskImage || getComputedStyle(el).webkitMaskImage);
      if (look.width === 1280) {
        expect(await wrap.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
        expect(await mask()).toBe('none');
        await page.close();
        return;
      }
      expect(await wrap.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
      await page.waitForSelector('.table-wrap.scrolls-right #queue-table');
      expect(await mask()).toContain('linear-gradient');
      // Its right edge is drawn faded: the fade is where the eye looks for more.
      await wrap.evaluate((el) => el.scrollTo({ left: el.scrollWidth }));
      await page.waitForSelector('.table-wrap.scrolls-left:not(.scrolls-right) #queue-table');
      await wrap.evaluate((el) => el.scrollTo({ left: 0 }));
      await page.waitForSelector('.table-wrap.scrolls-right:not(.scrolls-left) #queue-table');
      expect(await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)).toBe(false);
      await page.close();
    });
  }
});

describe('/docs', () => {
  for (const look of LOOKS) {
    it(`${look.name}: rq's title, logo and favicon, and an introduction for the API's users`, async () => {
      const page = await lookPage(look);
      await page.goto(`${suite.w.base}/docs`);
      expect(await page.title()).toBe('rq HTTP API');
      const logo = page.locator('#swagger-ui .topbar .topbar-wrapper a.link img');
      await logo.waitFor({ timeout: 20_000 });
      expect(await logo.getAttribute('src')).toMatch(/^data:image\/svg\+xml;base64,/);
      expect(await logo.evaluate((img) => (img as HTMLImageElement).naturalWidth > 0)).toBe(true);
      const icon = page.locator('link[rel="icon"]');
      expect(await icon.count()).toBe(1);
      expect(await icon.getAttribute('href')).toMatch(/\/docs\/static\/theme\/favicon\.svg$/);
      expect((await fetch(new URL((await icon.getAttribute('href'))!, suite.w.base))).headers.get('content-type')).toContain('image/svg+xml');
      const intro = page.locator('.information-container .description');
      await intro.waitFor();
      const text = await intro.innerText();
      expect(text).toContain('Authentication');
      expect(text).toContain('x_format=json');
      expect(text).toContain('docs/http-api.md');
      expect(text).not.toContain('src/web/routes.ts');
      await page.close();
    });
  }
});
