// Browser: Swagger UI at /docs renders rq's operations under rq's own CSP, loading nothing from another origin.
import { describe, expect, it } from 'vitest';
import { screenshot } from './browser-session.js';
import { browserSuite } from './browser-suite.js';

const suite = browserSuite(['jobs']);

describe('API docs in a browser', () => {
  it('shows the operations of the route table, every request staying on this server', async () => {
    const page = await suite.b.newPage();
    const requested: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    await page.goto(`${suite.w.base}/docs`);
    expect(await page.title()).toBe('rq HTTP API');
    // Swagger UI fetched /docs/json and drew one block per operation.
    const newMessage = page.locator('.opblock-post', { has: page.locator('[data-path="/q/{q}/new_message"]') });
    await newMessage.waitFor({ timeout: 20_000 });
    expect(await page.locator('.opblock').count()).toBeGreaterThan(40);
    expect(await page.locator('.opblock-get [data-path="/q.json"]').count()).toBe(1);
    await newMessage.locator('.opblock-summary').click();
    await page.locator('.opblock-body').first().waitFor();
    await screenshot(page, 'api-docs');

    expect(requested.length).toBeGreaterThan(3);
    expect(requested.filter((u) => !u.startsWith(`${suite.w.origin}/`) && !u.startsWith('data:'))).toEqual([]);
    expect(requested).toContain(`${suite.w.base}/docs/json`);
    expect(suite.b.dialogs).toEqual([]);
    // CSP violations and failed loads are console errors or failed requests.
    expect(suite.b.problems).toEqual([]);
    await page.close();
  });
});
