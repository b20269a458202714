// Browser: bulk retry of 1,000 err messages from the queue page (all matching the ERR filter): a confirmation with the count, then the job's page following it live to its summary; each message retried exactly once. Also the selected rows, and refusals by name.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readHistory } from '../../src/spool/history.js';
import { fillQueue } from '../helpers/fill-queue.js';
import { type WebRoot, postForm, startWebRoot } from '../web/web-root.js';
import { type BrowserSession, screenshot, startBrowser } from './browser-session.js';

let w: WebRoot;
let b: BrowserSession;
let ids: string[];

beforeAll(async () => {
  w = await startWebRoot({
    queues: { test: {} },
    setup: async (root) => {
      ids = await fillQueue(root, 'errs', 1000, { state: () => 'err', fields: (i) => ({ param1: `e-${i}` }) });
      await fillQueue(root, 'few', 3, { state: () => 'err' });
      // Paused: requeued messages stay in que, where their histories are read.
      await fs.writeFile(path.join(root, 'config', 'errs.pause'), '');
      await fs.writeFile(path.join(root, 'config', 'few.pause'), '');
    },
  });
  // The queue page waits 2 s for a queue's first read of its messages, then shows "reading" without
  // the bulk bar; 1,000 messages under load took longer. Read now, so the pages list at once.
  for (const q of ['errs', 'few']) expect((await w.mgr.q(q, 'search', { wait_ms: 60_000 }))[1].building).toBeUndefined();
  b = await startBrowser();
}, 120_000);
afterAll(async () => {
  await b?.close();
  await w?.stop();
});

describe('bulk actions in a browser', () => {
  it('retries all 1,000 err messages after a confirmation that says 1,000; each is retried exactly once', async () => {
    const page = await b.newPage();
    await page.goto(`${w.base}/q/errs?state=err`);
    expect(await page.locator('#page-range').textContent()).toBe('1–50 of 1,000');
    await page.locator('#bulk-op').selectOption('retry');
    await Promise.all([page.waitForURL(`${w.base}/q/errs/bulk`), page.locator('#bulk-all').click()]);
    expect(await page.locator('#bulk-count').textContent()).toBe('1,000');
    await screenshot(page, 'bulk-confirm');
    await Promise.all([page.waitForURL(/\/q\/errs\/bulk\?job=/), page.locator('#bulk-confirm-button').click()]);
    await page.locator('#bulk-job[data-state="finished"]').waitFor({ timeout: 60_000 });
    expect(await page.locator('#bulk-changed').textContent()).toBe('1,000');
    expect(await page.locator('#bulk-skipped').textContent()).toBe('0');
    await screenshot(page, 'bulk-finished');
    const que = path.join(w.root, 'queues', 'errs', 'que');
    const requeues = await Promise.all(
      ids.map(async (id) => ((await readHistory(path.join(que, id), id, 'que')) ?? []).filter((h) => h.from === 'err' && h.to === 'que').length),
    );
    expect(requeues.filter((n) => n !== 1)).toEqual([]);
    expect(b.problems).toEqual([]);
    await page.close();
  }, 120_000);

  it('acknowledges the selected rows only', async () => {
    const page = await b.newPage();
    await page.goto(`${w.base}/q/few?state=err`);
    const boxes = page.locator('#message-rows input.row-select');
    expect(await boxes.count()).toBe(3);
    await boxes.nth(0).check();
    await boxes.nth(1).check();
    expect(await page.locator('#bulk-selected-count').textContent()).toBe('2');
    await page.locator('#bulk-op').selectOption('ack');
    await Promise.all([page.waitForURL(`${w.base}/q/few/bulk`), page.locator('#bulk-selected').click()]);
    expect(await page.locator('#bulk-count').textContent()).toBe('2');
    await Promise.all([page.waitForURL(/job=/), page.locator('#bulk-confirm-button').click()]);
    await page.locator('#bulk-job[data-state="finished"]').waitFor();
    await page.goto(`${w.base}/q/few`);
    expect(await page.locator('#count-acked').textContent()).toBe('2');
    expect(await page.locator('#count-err').textContent()).toBe('1');
    await page.close();
  });

  it('refuses a bad bulk request by name (400), changing nothing', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ op: 'explode' }, 'op: expected one of retry, delete, ack, move, received "explode"'],
      [{ op: 'ack', scope: 'selected' }, 'ids: expected at least one selected message (tick its box), received ""'],
      [{ op: 'retry', state: 'nope' }, 'state: expected one of prep, que, run, done, relayed, err, acked, or all, received "nope"'],
      [{ op: 'move', state: 'err', confirm: '1' }, "lacking 'dest' field"],
    ];
    for (const [form, text] of cases) {
      const res = await postForm(`${w.base}/q/few/bulk`, { x_format: 'json', ...form });
      expect([form, res.status, await res.json()]).toEqual([form, 400, ['fail', text]]);
    }
  });
});
