// Browser: markup in a message's params and output is shown as text on every page; nothing in it runs.
import { describe, expect, it } from 'vitest';
import { send, waitState } from '../web/web-root.js';
import { screenshot } from './browser-session.js';
import { browserSuite } from './browser-suite.js';

const suite = browserSuite(['esc']);

const SCRIPT = '<script>alert("param")</script>';
const IMG = '<img src=x onerror=alert("img")>';

describe('escaping in a browser', () => {
  it('renders a <script> param as text, in the message page and its tail, with no dialog', async () => {
    const id = await send(suite.w.base, 'esc', { param1: 'echo', param2: `${SCRIPT} ${IMG}`, param3: SCRIPT, src: IMG });
    await waitState(suite.w.base, 'esc', id, ['done']);
    const page = await suite.b.newPage();
    await page.goto(`${suite.w.base}/q/esc/${id}`);
    expect((await page.locator('#field-param3').textContent())?.trim()).toBe(SCRIPT);
    expect((await page.locator('#field-param2').textContent())?.trim()).toBe(`${SCRIPT} ${IMG}`);
    await page.locator('#message-full summary').click();
    expect((await page.locator('#field-src').textContent())?.trim()).toBe(IMG);
    // The only scripts are the page's own modules; no element came from a value.
    const scripts = await page.locator('script').evaluateAll((els) => els.map((e) => (e as HTMLScriptElement).src));
    expect(scripts.every((s) => new URL(s).pathname.startsWith('/js/'))).toBe(true);
    expect(await page.locator('main img').count()).toBe(0);

    const tail = page.frameLocator('#tail-frame');
    await expect.poll(() => tail.locator('#tail-status').textContent(), { timeout: 10_000 }).toBe('ended: done - echoed');
    expect(await tail.locator('#tail-log').textContent()).toContain(`${SCRIPT} ${IMG}`);
    expect(await tail.locator('#tail-log script, #tail-log img').count()).toBe(0);
    await screenshot(page, 'message-escaped');

    // The queue page lists it; the raw JSON keeps the value as sent.
    await page.goto(`${suite.w.base}/q/esc`);
    expect(await page.locator(`#message-rows tr[data-msg-id="${id}"][data-state="done"]`).count()).toBe(1);
    const json = await (await fetch(`${suite.w.base}/q/esc/${id}.json`)).json();
    expect(json.param3).toBe(SCRIPT);

    // A dialog, CSP refusal or error the pages raised reaches us before a console line this page logs
    // now: the browser reports them in order over one connection. A CSP refusal would be in problems.
    await Promise.all([page.waitForEvent('console', (m) => m.text() === 'rq-escaping-marker'), page.evaluate(() => console.log('rq-escaping-marker'))]);
    expect(suite.b.dialogs).toEqual([]);
    expect(suite.b.problems).toEqual([]);
    await page.close();
  });
});
