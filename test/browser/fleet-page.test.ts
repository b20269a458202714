// Browser: the fleet page follows the fleet live (public/js/fleet.js): a queue paused on a host, then the host stopped, show without a reload.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EtcdProc } from '../helpers/etcd.js';
import { waitFor } from '../helpers/rq-root.js';
import { type Host, startHost, stopHost } from '../fleet/fleet-harness.js';
import { type BrowserSession, screenshot, startBrowser } from './browser-session.js';

let etcd: EtcdProc;
let a: Host;
let b: Host;
let browser: BrowserSession;

beforeAll(async () => {
  etcd = await EtcdProc.start();
  [a, b] = await Promise.all(['a', 'b'].map((n) => startHost(n, etcd.url)));
  // rq-mgr answers before its web worker listens: the page is opened once the web answers.
  await waitFor(
    () =>
      fetch(`http://127.0.0.1:${a.root.port}/healthz`).then(
        (r) => r.status > 0,
        () => false,
      ),
    "a's web to answer",
    30_000,
  );
  browser = await startBrowser();
}, 90_000);
afterAll(async () => {
  await browser?.close();
  for (const h of [a, b]) await stopHost(h);
  await etcd?.cleanup();
}, 60_000);

it('shows a pause and a host gone without a reload', { timeout: 60_000 }, async () => {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${a.root.port}/`);
  await Promise.all([page.waitForURL(/\/fleet$/), page.locator('#nav-fleet').click()]);
  const status = page.locator('#host-b [data-col="status"]');
  await status.filter({ hasText: 'UP' }).waitFor({ timeout: 15_000 });
  // A mark on the document: a reload would lose it.
  await page.evaluate(() => ((window as unknown as { stayed: boolean }).stayed = true));
  expect(await b.mgr.cmd('pause_queue', 'q1')).toEqual(['ok', 'q1']);
  await status.filter({ hasText: 'PAUSE' }).waitFor({ timeout: 15_000 });
  await b.mgr.stop();
  await page.locator('#host-b[data-state="gone"]').waitFor({ timeout: 15_000 });
  expect(await page.locator('#host-b [data-col="since"]').textContent()).toMatch(/ago\)$/);
  expect(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).toBe(true);
  await screenshot(page, 'fleet-page');
});
