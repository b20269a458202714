// Browser: a queue's stats page after a mix of outcomes draws its four uPlot charts, shows the numbers of stats.json as text, links each failure group to exactly its messages, and requeues a group after a confirmation.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Dialog, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTCOMES } from '../../src/ipc/stats-reply.js';
import { seconds } from '../../src/web/views/stats-charts-view.js';
import { COUNTERS } from '../../src/web/views/stats-view.js';
import { OUTCOME_SH, type OutcomeMix, runOutcomeMix } from '../web/stats-fixture.js';
import { type WebRoot, startWebRoot, stateOf, waitState } from '../web/web-root.js';
import { type BrowserSession, LOOKS, pageIn, screenshot, startBrowser } from './browser-session.js';

let w: WebRoot;
let b: BrowserSession;
let mix: OutcomeMix;
let gate: string;

beforeAll(async () => {
  w = await startWebRoot({ queues: { jobs: { script: OUTCOME_SH, num_workers: 2 } } });
  b = await startBrowser();
  gate = path.join(w.root, 'gate');
  mix = await runOutcomeMix(w.base, 'jobs', gate);
}, 60_000);
afterAll(async () => {
  await b?.close();
  await w?.stop();
});

const CHARTS = ['chart-minute', 'chart-hourly', 'chart-wait', 'chart-run'];

async function text(page: Page, selector: string): Promise<string> {
  return ((await page.locator(selector).textContent()) ?? '').trim();
}

describe('the stats page in a browser', () => {
  it('draws throughput and latency charts and shows the same numbers as stats.json', async () => {
    const page = await b.newPage();
    await page.goto(`${w.base}/q/jobs`);
    await Promise.all([page.waitForURL(`${w.base}/q/jobs/stats`), page.locator('#stats-link').click()]);
    expect(await page.title()).toBe('RQ :: jobs');
    await page
      .locator('.chart-box.drawn')
      .nth(CHARTS.length - 1)
      .waitFor();
    for (const id of CHARTS) {
      // uPlot draws on a canvas inside the box, with a legend naming each series.
      const canvas = page.locator(`#${id} canvas`);
      expect(await canvas.count(), id).toBe(1);
      const box = await canvas.boundingBox();
      expect(box && box.width > 200 && box.height > 100, `${id} canvas size ${JSON.stringify(box)}`).toBe(true);
      const legend = await page.locator(`#${id} .u-legend`).innerText();
      const names = id === 'chart-wait' ? ['wait'] : id === 'chart-run' ? ['run'] : ['done', 'err'];
      for (const n of names) expect(legend, id).toContain(n);
    }

    const day = await (await fetch(`${w.base}/q/jobs/stats.json`)).json();
    const shown = async (ids: string[]) => Promise.all(ids.map((id) => text(page, `#${id}`)));
    expect(await shown(COUNTERS.map((k) => `stat-${k}`))).toEqual(COUNTERS.map((k) => String(day[k])));
    expect(await shown(OUTCOMES.map((o) => `outcome-${o}`))).toEqual(OUTCOMES.map((o) => String(day.outcomes[o])));
    expect(await shown(['live-done', 'live-err', 'que-ready'])).toEqual([day.live.counts.done, day.live.counts.err, day.live.que.ready].map(String));
    const sum = (xs: number[]) => xs.reduce((a, n) => a + n, 0);
    expect(await shown(['minute-done', 'minute-err', 'hourly-done', 'hourly-err'])).toEqual(
      [day.live.per_minute.done, day.live.per_minute.err, day.hourly.done, day.hourly.err].map((xs) => String(sum(xs))),
    );
    for (const d of ['wait', 'run']) {
      expect(await shown([`${d}-count`, `${d}-p50`, `${d}-p95`, `${d}-p99`])).toEqual([
        String(day[d].count),
        `≤ ${seconds(day[d].p50)}`,
        `≤ ${seconds(day[d].p95)}`,
        `≤ ${seconds(day[d].p99)}`,
      ]);
    }
    expect(day).toMatchObject({ done: 3, err: 4 });
    await screenshot(page, 'stats-page');

    // The numbers behind a chart open under it.
    await page.locator('#chart-run-data summary').click();
    expect(await page.locator('#run-bins tbody tr').count()).toBeGreaterThanOrEqual(2);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForFunction(() => (document.querySelector('#chart-hourly canvas') as HTMLCanvasElement).getBoundingClientRect().width < 390);
    await screenshot(page, 'stats-page-phone');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 800 });

    // The previous day is a stored-day link away, with no live part.
    await page.locator('#stats-prev').click();
    await page.waitForURL(/\/q\/jobs\/stats\?date=\d{8}$/);
    expect(await text(page, '#stat-created')).toBe('0');
    expect(await page.locator('#chart-minute').count()).toBe(0);
    expect(await page.locator('#chart-hourly.drawn').count()).toBe(1);
    expect(b.problems).toEqual([]);
    await page.close();
  });

  for (const look of LOOKS) {
    it(`${look.name}: tile names break only after an underscore, quantiles read as bounds, days as ISO dates`, async () => {
      const page = await pageIn(b, look);
      await page.goto(`${w.base}/q/jobs/stats`);
      // Every piece of a name between its break points sits on one line: nothing is cut inside a word.
      const cut = await page.locator('.stat-tiles dt').evaluateAll((dts) =>
        dts.flatMap((dt) =>
          [...dt.childNodes]
            .filter((n) => n.nodeType === Node.TEXT_NODE && n.textContent)
            .filter((n) => {
              const r = document.createRange();
              r.selectNodeContents(n);
              return new Set([...r.getClientRects()].map((rect) => Math.round(rect.top))).size > 1;
            })
            .map((n) => `${dt.textContent}: ${n.textContent}`),
        ),
      );
      expect(cut).toEqual([]);
      expect(await page.locator('#stats-outcomes dt', { hasText: 'dependency_failed' }).innerHTML()).toBe('dependency_<wbr>failed');
      expect(
        await page
          .locator('.stat-tiles dt')
          .first()
          .evaluate((dt) => getComputedStyle(dt).overflowWrap),
      ).toBe('normal');
      for (const d of ['wait', 'run']) for (const q of ['p50', 'p95', 'p99']) expect(await text(page, `#${d}-${q}`)).toMatch(/^(≤ \S.* s|≤ \d+m \d+s|-)$/);
      expect(await text(page, '#quantile-note')).toContain('upper bounds');
      // The day is typed and shown as YYYY-MM-DD, as every date on the page, never in the browser's locale.
      const dateInput = page.locator('#stats-date');
      expect(await dateInput.getAttribute('type')).toBe('text');
      expect(await dateInput.inputValue()).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(await page.locator('#stats-prev').innerText()).toMatch(/\d{4}-\d{2}-\d{2}$/);
      const ready = await text(page, '#oldest-ready-line');
      expect(ready === 'No ready message waiting.' || /^Oldest ready message waiting for \S/.test(ready), ready).toBe(true);
      expect(ready).not.toContain('none ready');
      expect(await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)).toBe(false);
      await screenshot(page, `stats-${look.name}`);
      await page.close();
    });
  }

  it('links a failure group to exactly its messages and requeues it only once confirmed', async () => {
    const page = await b.newPage();
    await page.goto(`${w.base}/q/jobs/stats`);
    const groups = await page
      .locator('#failure-groups tbody tr')
      .evaluateAll((rows) => rows.map((r) => [(r as HTMLElement).dataset.group, r.querySelector('td.count')?.textContent]));
    expect(groups).toEqual([
      ['ValueError', '2'],
      ['HTTP503', '1'],
      ['fatal', '1'],
    ]);
    await Promise.all([page.waitForURL(`${w.base}/q/jobs/failed?group=ValueError`), page.locator('tr[data-group="ValueError"] a.group-link').click()]);
    const listed = await page.locator('#group-messages tbody tr').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.msgId));
    expect(listed.sort()).toEqual([...mix.valueError].sort());
    expect(await text(page, '#group-total')).toBe('2');
    await screenshot(page, 'stats-failure-group');

    // Declined (the session dismisses every dialog): nothing is posted, the messages stay in err.
    const confirmText = 'confirm: Run the 2 err messages of group ValueError of jobs again?';
    await page.locator('#btn-requeue-group-ValueError').click();
    await expect.poll(() => b.dialogs).toEqual([confirmText]);
    expect(page.url()).toBe(`${w.base}/q/jobs/failed?group=ValueError`);
    for (const id of mix.valueError) expect(await stateOf(w.base, 'jobs', id)).toBe('err');

    // Accepted: the group is requeued and, with the gate open, its messages finish done.
    await fs.writeFile(gate, '');
    page.removeAllListeners('dialog');
    const accepted: string[] = [];
    page.on('dialog', (d: Dialog) => {
      accepted.push(`${d.type()}: ${d.message()}`);
      void d.accept();
    });
    await Promise.all([page.waitForURL(`${w.base}/q/jobs/stats`), page.locator('#btn-requeue-group-ValueError').click()]);
    expect(accepted).toEqual([confirmText]);
    expect(await text(page, '#flash-notice')).toBe('2 messages requeued');
    for (const id of mix.valueError) await waitState(w.base, 'jobs', id, ['done']);
    for (const id of [...mix.http503, ...mix.fatal]) expect(await stateOf(w.base, 'jobs', id)).toBe('err');
    await page.reload();
    expect(await page.locator('#failure-groups tbody tr').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.group))).toEqual([
      'HTTP503',
      'fatal',
    ]);
    await page
      .locator('.chart-box.drawn')
      .nth(CHARTS.length - 1)
      .waitFor();
    await screenshot(page, 'stats-after-requeue');
    expect(b.problems).toEqual([]);
    await page.close();
  });
});
