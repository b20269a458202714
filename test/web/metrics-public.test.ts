// metrics_public (rq-beyond §B1.5, §B16): with basic_auth, /metrics and /healthz answer without
// credentials and every other route, method and spelling of a path still answers 401; under a
// relative_root the exemption follows the prefix.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseScrape } from '../helpers/prom-text.js';
import { type Route, fillRoute, routeTable } from './route-table.js';
import { type WebRoot, startWebRoot } from './web-root.js';

const PREFIX = '/rq';
const OPEN = new Set([`GET ${PREFIX}/metrics`, `HEAD ${PREFIX}/metrics`, `GET ${PREFIX}/healthz`, `HEAD ${PREFIX}/healthz`]);

let w: WebRoot;
let routes: Route[];

beforeAll(async () => {
  w = await startWebRoot({ config: { relative_root: `${PREFIX}/`, metrics_public: true, basic_auth: { realm: 'rq-public', users: { admin: 's3cret' } } } });
  routes = await routeTable(w.root);
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

async function statusOf(method: string, url: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(url, { method, headers, redirect: 'manual', body: method === 'POST' ? new URLSearchParams() : undefined });
  await res.body?.cancel();
  return res.status;
}

describe('metrics_public', () => {
  it('opens /metrics and /healthz (GET and HEAD) to a request without credentials', async () => {
    const res = await fetch(`${w.origin}${PREFIX}/metrics`);
    expect(res.status).toBe(200);
    expect(parseScrape(await res.text()).value('rq_queue_up', { queue: 'test' })).toBe(1);
    for (const r of OPEN) {
      const [method, p] = r.split(' ');
      expect(`${r} ${await statusOf(method, w.origin + p)}`).toBe(`${r} 200`);
    }
  });

  it('every other route of the table still answers 401 without credentials', async () => {
    const values = { q: 'test', id: '20261121.1643.46.613.2164022', name: 'a.txt', file: 'stdio.log', tag: 'x' };
    const others = routes.filter((r) => !OPEN.has(`${r.method} ${r.pattern}`));
    expect(others.length).toBeGreaterThan(55);
    const answers: string[] = [];
    for (const r of others) answers.push(`${r.method} ${r.pattern} ${await statusOf(r.method, w.origin + fillRoute(r.pattern, values))}`);
    expect(answers).toEqual(others.map((r) => `${r.method} ${r.pattern} 401`));
  });

  it('is granted by the route matched, not by the text of the path', async () => {
    // Spellings that reach the metrics route anyway (fastify ignores a trailing slash and doubled slashes).
    for (const p of [`${PREFIX}/metrics/`, `${PREFIX}//metrics`, `${PREFIX}/metrics?x=1`])
      expect(`${p} ${await statusOf('GET', w.origin + p)}`).toBe(`${p} 200`);
    // Spellings that reach another route, or none, are not let through.
    for (const p of [
      '/metrics',
      `${PREFIX}/metrics/../q.json`,
      `${PREFIX}/metrics.json`,
      `${PREFIX}/q/metrics`,
      `${PREFIX}/metricsx`,
      `${PREFIX}/healthz/../dashboard.json`,
    ]) {
      expect(`${p} ${await statusOf('GET', w.origin + p)}`).toBe(`${p} 401`);
    }
    expect(await statusOf('POST', `${w.origin}${PREFIX}/metrics`)).toBe(401);
  });

  it('with credentials everything still works', async () => {
    const auth = { authorization: `Basic ${Buffer.from('admin:s3cret').toString('base64')}` };
    expect(await statusOf('GET', `${w.origin}${PREFIX}/q.json`, auth)).toBe(200);
    expect(await statusOf('GET', `${w.origin}${PREFIX}/metrics`, auth)).toBe(200);
  });
});
