// Basic auth on the dependency and limit routes (undepend, /limits.json, the pages): 401 without credentials, acting on nothing; with them they work.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WebRoot, send, startWebRoot, waitState } from './web-root.js';
import { later } from './depends-limits-harness.js';

describe('basic auth', () => {
  let a: WebRoot;
  beforeAll(async () => {
    a = await startWebRoot({ config: { basic_auth: { realm: 'rq-dl', users: { admin: 'pw' } } }, queues: { dn: {} } });
  }, 60_000);
  afterAll(async () => {
    await a?.stop();
  });

  it('the new routes answer 401 without credentials and act on nothing; with them they work', async () => {
    const good = { authorization: `Basic ${Buffer.from('admin:pw').toString('base64')}` };
    const x = await send(a.base, 'dn', { param1: 'done', due: later() }, { headers: good });
    const d = await send(a.base, 'dn', { param1: 'done', depends: `dn/${x}` }, { headers: good });
    for (const [method, p] of [
      ['GET', '/limits.json'],
      ['GET', '/'],
      ['GET', `/q/dn/${d}`],
      ['POST', `/q/dn/${d}/undepend`],
    ]) {
      const res = await fetch(a.base + p, {
        method,
        body: method === 'POST' ? new URLSearchParams({ all: 'true', x_format: 'json' }) : undefined,
        headers: { authorization: 'Basic ' + Buffer.from('admin:nope').toString('base64') },
      });
      expect([p, res.status, res.headers.get('www-authenticate')?.startsWith('Basic realm="rq-dl"')]).toEqual([p, 401, true]);
    }
    expect(((await (await fetch(`${a.base}/q/dn/${d}.json`, { headers: good })).json()) as { waiting: unknown }).waiting).toEqual({
      reason: 'dependencies',
      waiting_on: [`dn/${x}`],
    });
    expect((await fetch(`${a.base}/limits.json`, { headers: good })).status).toBe(200);
    const res = await fetch(`${a.base}/q/dn/${d}/undepend`, { method: 'POST', headers: good, body: new URLSearchParams({ all: 'true', x_format: 'json' }) });
    expect([res.status, await res.json()]).toEqual([200, ['ok', []]]);
    await waitState(a.base, 'dn', d, ['done'], { headers: good });
  });
});
