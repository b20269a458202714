// One order of queues in every listing: orderQueues itself, then a real rq-mgr's dashboard table, /dashboard.json, /q.json, /q.txt and rq queues (--json too), all alike.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderQueues } from '../../src/message/queue-order.js';
import { MgrProc } from '../helpers/mgr-proc.js';
import { runRq } from '../helpers/rq-cli.js';
import { type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';

describe('orderQueues', () => {
  it("the user's queues by name, then the built-ins present in their classic order", () => {
    expect(orderQueues(['webhook', 'zulu', 'debug', 'Alpha', 'alpha', 'cleaner'])).toEqual(['Alpha', 'alpha', 'zulu', 'debug', 'cleaner', 'webhook']);
    expect(orderQueues([])).toEqual([]);
  });
});

describe('every listing of a running root', () => {
  let t: TestRoot;
  let mgr: MgrProc;
  // Made in an order that is none of the listings': rq-mgr answers `queues` in the order it started them.
  const MADE = ['webhook', 'zulu', 'debug', 'alpha', 'mike'];
  const ORDER = ['alpha', 'mike', 'zulu', 'debug', 'webhook'];

  beforeAll(async () => {
    t = await makeRoot();
    for (const q of MADE.slice(0, 2)) await addQueue(t.root, q);
    mgr = await MgrProc.start(t.root);
    // Created while it runs, so they start after the first two.
    for (const q of MADE.slice(2))
      expect(await mgr.cmd('create_queue', JSON.stringify({ name: q, script: '/bin/true', num_workers: 1 }))).toEqual(['success', 'queue created - awesome']);
    for (const q of MADE) await mgr.waitQueueUp(q);
    expect(await mgr.cmd('queues')).not.toEqual(['ok', ORDER]);
  }, 60_000);
  afterAll(async () => {
    await mgr?.stop();
    await t?.cleanup();
  });

  it('the dashboard table, /dashboard.json, /q.json, /q.txt and rq queues list them in that one order', async () => {
    const base = `http://127.0.0.1:${t.port}`;
    await waitFor(async () => (await fetch(`${base}/q.json`).catch(() => null))?.status === 200, 'the web to answer', 20_000);
    const page = await (await fetch(`${base}/`)).text();
    expect([...page.matchAll(/<tr id="q-[^"]+" data-queue="([^"]+)"/g)].map((m) => m[1])).toEqual(ORDER);
    const dash = (await (await fetch(`${base}/dashboard.json`)).json()) as { queues: { name: string }[] };
    expect(dash.queues.map((q) => q.name)).toEqual(ORDER);
    expect(await (await fetch(`${base}/q.json`)).json()).toEqual(ORDER);
    expect(await (await fetch(`${base}/q.txt`)).text()).toBe(ORDER.map((q) => `q/${q}.txt\n`).join('') + '\n');
    const lines = await runRq(['queues'], { root: t.root });
    expect(lines.out.slice(1).map((l) => l.split(' ')[0])).toEqual(ORDER);
    const json = await runRq(['queues', '--json'], { root: t.root });
    expect((JSON.parse(json.out.join('')) as { queue: string }[]).map((r) => r.queue)).toEqual(ORDER);
  }, 60_000);
});
