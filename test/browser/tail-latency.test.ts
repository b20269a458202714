// Browser: how long a line written by a running script takes to show on an open tail page (target: median ≤ 200 ms).
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT } from '../helpers/rq-root.js';
import { send, waitState } from '../web/web-root.js';
import { screenshot } from './browser-session.js';
import { browserSuite } from './browser-suite.js';
import { budget } from '../helpers/time-budget.js';

const LINES = 10;
const TARGET_MS = 200;

const suite = browserSuite(['stamps']);

interface Seen {
  n: number;
  /** $EPOCHREALTIME of the script when it wrote the line, in ms. */
  written: number;
  /** performance.timeOrigin + performance.now() when the line appeared in the page, in ms. */
  shown: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

describe('live tail latency in a browser', () => {
  it(`shows a line written by a running script within ${TARGET_MS} ms (median of ${LINES})`, async () => {
    const gate = path.join(suite.w.root, 'gate-stamps');
    const id = await send(suite.w.base, 'stamps', { param1: 'stamps', param2: gate, param3: String(LINES), param4: '0.2' });
    await waitState(suite.w.base, 'stamps', id, ['run']);
    const page = await suite.b.newPage();
    await page.goto(`${suite.w.base}/q/stamps/${id}/tailviewlog/stdio.log`);
    await expect.poll(() => page.locator('#tail-log').textContent(), { timeout: 10_000 }).toContain('RQ START');

    // The page notes the moment each stamp line is added to the DOM (the observer runs right after the insert).
    await page.evaluate(() => {
      const pre = document.getElementById('tail-log')!;
      const seen: { n: number; written: number; shown: number }[] = [];
      (window as unknown as { rqSeen: typeof seen }).rqSeen = seen;
      new MutationObserver(() => {
        const shown = performance.timeOrigin + performance.now();
        for (const m of pre.textContent!.matchAll(/stamp (\d+) (\d+[.,]\d+)\n/g)) {
          const n = Number(m[1]);
          if (!seen.some((s) => s.n === n)) seen.push({ n, written: Number(m[2].replace(',', '.')) * 1000, shown });
        }
      }).observe(pre, { childList: true, characterData: true, subtree: true });
    });
    await fs.writeFile(gate, '');
    await expect.poll(() => page.locator('#tail-status').textContent(), { timeout: 20_000 }).toBe('ended: done - stamps written');

    const seen = await page.evaluate(() => (window as unknown as { rqSeen: Seen[] }).rqSeen);
    expect(seen.map((s) => s.n)).toEqual(Array.from({ length: LINES }, (_, i) => i + 1));
    // performance.timeOrigin is taken once per page, and the page's monotonic clock can drift from the wall clock bash
    // reads (CI saw -12.9 ms on a loaded host): the skew, measured now, puts `shown` back on the wall clock.
    const skew = await page.evaluate(() => performance.timeOrigin + performance.now() - Date.now());
    const lat = seen.map((s) => s.shown - skew - s.written);
    const result = {
      lines: LINES,
      median_ms: Math.round(median(lat) * 10) / 10,
      max_ms: Math.round(Math.max(...lat) * 10) / 10,
      min_ms: Math.round(Math.min(...lat) * 10) / 10,
      target_ms: TARGET_MS,
      page_clock_skew_ms: Math.round(skew * 10) / 10,
      loadavg: (await fs.readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' '),
    };
    // Reported for docs/performance.md; kept in test-output so a CI run leaves the figure behind.
    console.log(`tail latency: ${JSON.stringify(result)}`);
    await fs.mkdir(path.join(PROJECT, 'test-output'), { recursive: true });
    await fs.writeFile(path.join(PROJECT, 'test-output', 'browser-tail-latency.json'), JSON.stringify(result) + '\n');
    await screenshot(page, 'tail-latency');

    // Clocks: with the skew taken out both sides read the same wall clock; a negative latency would mean the measurement is broken.
    expect(Math.abs(skew)).toBeLessThan(20);
    expect(Math.min(...lat)).toBeGreaterThan(-5);
    expect(result.median_ms).toBeLessThanOrEqual(budget(TARGET_MS));
    expect(suite.b.problems).toEqual([]);
    await page.close();
  });
});
