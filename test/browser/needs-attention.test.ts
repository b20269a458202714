// Browser: the dashboard's Needs attention panel and a SCRIPTERROR queue's reason, which the live refresh keeps while it lasts and drops once the script is fixed.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DoctorReport } from '../../src/mgr/doctor.js';
import { waitFor } from '../helpers/rq-root.js';
import { type WebRoot, send, startWebRoot } from '../web/web-root.js';
import { type BrowserSession, BROWSER_SH, screenshot, startBrowser } from './browser-session.js';

let w: WebRoot;
let b: BrowserSession;
let apps: string;
let script: string;

beforeAll(async () => {
  apps = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-attention-'));
  script = path.join(apps, 'run');
  w = await startWebRoot({ queues: { work: { script: BROWSER_SH }, broken: { script } } });
  b = await startBrowser();
}, 60_000);
afterAll(async () => {
  await b?.close();
  await w?.stop();
  await fs.rm(apps, { recursive: true, force: true });
});

describe('Needs attention in a browser', () => {
  it('lists the problem above the queue table; the row keeps its reason through live refreshes until the script is fixed', async () => {
    await w.mgr.cmd('pause_queue', 'work');
    await send(w.base, 'broken', { param1: 'x' });
    await waitFor(
      async () => ((await (await fetch(`${w.base}/doctor.json`)).json()) as DoctorReport).findings.some((f) => f.subject === 'queue broken'),
      'the queue to report SCRIPTERROR',
      20_000,
    );
    const reason = `script ${script} does not exist`;

    const page = await b.newPage();
    await page.goto(`${w.base}/`);
    expect(await page.locator('#attention h2').textContent()).toBe('Needs attention');
    expect(await page.locator('#attention-list li').count()).toBeGreaterThanOrEqual(2);
    expect(await page.locator('li[data-subject="queue broken"]').textContent()).toContain(reason);
    expect(await page.locator('li[data-subject="queue work"]').getAttribute('data-severity')).toBe('info');
    expect(await page.locator('#q-broken-reason').textContent()).toBe(reason);
    expect(await page.locator('#q-broken-status').getAttribute('title')).toBe(reason);
    await page.evaluate(() => ((window as unknown as { rqMark: string }).rqMark = 'same page'));

    // A create in another queue makes the dashboard redraw its rows from /dashboard.json.
    await send(w.base, 'work', { param1: 'noop' });
    await expect.poll(() => page.locator('#q-work-que').textContent(), { timeout: 10_000 }).toBe('1');
    expect(await page.locator('#q-broken-reason').textContent()).toBe(reason);
    expect(await page.evaluate(() => (window as unknown as { rqMark?: string }).rqMark)).toBe('same page');
    await screenshot(page, 'dashboard-attention');
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

    // Fixed: the queue runs its message, and the next redraw drops the reason.
    await fs.writeFile(script, '#!/bin/sh\necho "done fixed" >&3\n', { mode: 0o755 });
    await expect.poll(() => page.locator('#q-broken-done').textContent(), { timeout: 20_000 }).toBe('1');
    await expect.poll(() => page.locator('#q-broken-reason').count(), { timeout: 10_000 }).toBe(0);
    expect(await page.locator('#q-broken-status').textContent()).toBe('UP');
    expect(await page.locator('#q-broken-status').getAttribute('title')).toBeNull();
    expect(b.problems).toEqual([]);
    await page.close();
  });
});
