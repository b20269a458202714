// Browser on a 375×812 phone: message ids wrap only at their dots, never inside a number (the message page's title, fields,
// dependency links and tail; the queue page's and dashboard's tables), a shortened one keeps its whole id in its title; every
// column of the dashboard's and the queue page's tables can be scrolled to, the table fading at the edge it goes on past; the
// live dashboard keeps the server's order of its queues while their counts change.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { type DrawnId, drawnIds } from '../helpers/id-lines.js';
import { send, waitState } from '../web/web-root.js';
import { overflowsSideways, settled } from './browser-session.js';
import { browserSuite } from './browser-suite.js';

const suite = browserSuite(['look', 'zz-last', 'aa-first']);
const gates: string[] = [];
/** Lets every gated run go on (the queue has one worker: a held run holds the next tests' messages). */
const openGates = async () => {
  for (const g of gates.splice(0)) for (const step of [1, 2, 3]) await fs.writeFile(`${g}.${step}`, '');
};
afterEach(openGates);

async function phonePage(url: string): Promise<Page> {
  const page = await suite.b.newPage();
  await page.setViewportSize({ width: 375, height: 812 });
  await page.goto(`${suite.w.base}${url}`);
  await settled(page);
  return page;
}

/** No id drawn broken inside a number; one cut short has its whole id in its title. */
function expectWhole(ids: DrawnId[]): void {
  expect(ids.filter((i) => i.midNumber).map((i) => `${i.where}: ${i.lines}`)).toEqual([]);
  expect(ids.filter((i) => i.clipped && !(i.title ?? '').includes(i.lines.replaceAll('⏎', ''))).map((i) => `${i.where}: ${i.lines}`)).toEqual([]);
}

/** Scrolls each header cell of the table into view: it must then be drawn inside its scroller and the screen. */
async function expectEveryColumnReachable(page: Page, table: string): Promise<string[]> {
  const wrap = page.locator('.table-wrap', { has: page.locator(table) });
  const heads = page.locator(`${table} thead th`);
  const seen: string[] = [];
  for (let i = 0; i < (await heads.count()); i++) {
    const th = heads.nth(i);
    await th.evaluate((el) => el.scrollIntoView({ block: 'nearest', inline: 'nearest' }));
    const [b, w] = [(await th.boundingBox())!, (await wrap.boundingBox())!];
    expect(b, `column ${i + 1} of ${table} is drawn`).not.toBeNull();
    expect(b.width).toBeGreaterThan(0);
    expect(b.x).toBeGreaterThanOrEqual(Math.max(0, w.x) - 1);
    expect(b.x + b.width).toBeLessThanOrEqual(Math.min(375, w.x + w.width) + 1);
    seen.push((await th.innerText()).trim());
  }
  return seen;
}

describe('a phone, 375×812', () => {
  it('the message page: its id in the title wraps at a dot, the msg_id row is whole or shortened with a title, links and the tail break only at separators', async () => {
    const gate = path.join(suite.w.root, 'phone-gate');
    gates.push(gate);
    const up = await send(suite.w.base, 'look', { param1: 'progress', param2: gate });
    await waitState(suite.w.base, 'look', up, ['run']);
    const down = await send(suite.w.base, 'look', { param1: 'noop', depends: [`look/${up}`] });

    const page = await phonePage(`/q/look/${up}`);
    await page.locator('#message-full > summary').click();
    await page.locator('#field-msg_id').waitFor();
    const ids = await drawnIds(page);
    expectWhole(ids);
    // The title line's id is too wide for the screen: it wraps, at a dot.
    const title = ids.find((i) => i.lines.replaceAll('⏎', '') === up && i.lines.includes('⏎'));
    expect(title?.lines, 'the page title wraps its id').toMatch(/^[\d.]+\.⏎[\d.⏎]+$/);
    expect(await page.locator('#message-id').textContent()).toBe(up);
    expect(
      ids.some((i) => i.lines.replaceAll('⏎', '') === down && i.where === 'a.ref'),
      'the dependents link is drawn',
    ).toBe(true);
    expect(await page.locator('#field-msg_id').getAttribute('title')).toBe(up);
    const frame = page.frame({ url: /tailviewlog/ })!;
    await frame.locator('#tail-title').waitFor();
    expectWhole(await drawnIds(frame));
    expect(await frame.locator('#tail-title').textContent()).toBe(`look : ${up} : stdio.log`);
    expect(await overflowsSideways(page)).toBe(false);
    // Where there is room the msg_id row shows the whole id.
    await page.setViewportSize({ width: 1280, height: 812 });
    await expect.poll(() => page.locator('#field-msg_id').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    expect(await page.locator('#field-msg_id').innerText()).toBe(up);
    await page.close();

    const waiting = await phonePage(`/q/look/${down}`);
    const its = await drawnIds(waiting);
    expectWhole(its);
    expect(
      its.some((i) => i.lines.replaceAll('⏎', '') === up && i.where === 'a.ref'),
      'the awaited dependency is drawn',
    ).toBe(true);
    await waiting.close();

    const tail = await phonePage(`/q/look/${up}/tailviewlog/stdio.log`);
    expectWhole(await drawnIds(tail));
    await tail.close();
    await openGates();
    await waitState(suite.w.base, 'look', down, ['done']);
    expect(suite.b.problems).toEqual([]);
  });

  it('the queue page: ids whole in the message table, every column reachable by scrolling, the table fading where it goes on', async () => {
    const id = await send(suite.w.base, 'look', { param1: 'echo', param2: 'x'.repeat(60) });
    await waitState(suite.w.base, 'look', id, ['done']);
    const page = await phonePage('/q/look?state=done');
    await page.locator(`#message-rows tr[data-msg-id="${id}"]`).waitFor();
    const ids = await drawnIds(page);
    expect(ids.map((i) => i.lines)).toContain(id);
    expectWhole(ids);
    await page.waitForSelector('.table-wrap.scrolls-right #message-table');
    expect(await expectEveryColumnReachable(page, '#message-table')).toEqual([
      '',
      'ID',
      'STATE',
      'CREATED',
      'DUE',
      'ATTEMPTS',
      'DURATION',
      'PARAM1',
      'STATUS',
      '',
    ]);
    await page.waitForSelector('.table-wrap.scrolls-left #message-table');
    expect(await overflowsSideways(page)).toBe(false);
    await page.close();
  });

  it("the dashboard: every column reachable, the fade at the edge it scrolls to, the server's order of queues kept as counts change", async () => {
    await suite.w.mgr.cmd('pause_queue', 'zz-last');
    const page = await phonePage('/');
    await page.locator('#q-look').waitFor();
    const order = async () => (await (await fetch(`${suite.w.base}/dashboard.json`)).json()).queues.map((q: { name: string }) => q.name);
    const rows = () => page.locator('#queue-table tbody tr').evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.queue));
    const before = await order();
    expect(await rows()).toEqual(before);
    await page.evaluate(() => ((window as unknown as { rqMark: string }).rqMark = 'same page'));
    // A queue further down the list gets the most messages: the rows stay where the server put them.
    for (let i = 0; i < 3; i++) await send(suite.w.base, 'zz-last', { param1: 'noop' });
    await expect.poll(() => page.locator('#q-zz-last-que').textContent(), { timeout: 10_000 }).toBe('3');
    await settled(page);
    expect(await rows()).toEqual(await order());
    expect(await rows()).toEqual(before);
    expect(await page.evaluate(() => (window as unknown as { rqMark?: string }).rqMark)).toBe('same page');

    await page.waitForSelector('.table-wrap.scrolls-right #queue-table');
    const mask = await page
      .locator('.table-wrap', { has: page.locator('#queue-table') })
      .evaluate((el) => getComputedStyle(el).maskImage || getComputedStyle(el).webkitMaskImage);
    expect(mask).toContain('linear-gradient');
    expect(await expectEveryColumnReachable(page, '#queue-table')).toEqual([
      'NAME',
      'PREP',
      'QUEUE',
      'RUN',
      'ERR',
      'DONE',
      'RELAYED',
      'PID',
      'UPTIME',
      'STATUS',
    ]);
    await page.waitForSelector('.table-wrap.scrolls-left:not(.scrolls-right) #queue-table');
    expect(await overflowsSideways(page)).toBe(false);
    await suite.w.mgr.cmd('resume_queue', 'zz-last');
    expect(suite.b.problems).toEqual([]);
    await page.close();
  });
});
