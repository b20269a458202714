// The fleet page (GET /fleet) and `rq queues --fleet` against a real etcd: every host with its queues, a stopped host gone with since when,
// a hostile record in etcd shown escaped, and the header's link to the page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdProc } from '../helpers/etcd.js';
import { waitFor } from '../helpers/rq-root.js';
import { BIN, run } from '../helpers/mgr-proc.js';
import { EtcdStore } from '../../src/fleet/etcd-client.js';
import { type Host, KEYS, startHost, stopHost } from './fleet-harness.js';

let etcd: EtcdProc;
let store: EtcdStore;
let a: Host;
let b: Host;

const SCRIPT = '<script>alert(1)</script>';
/** Written straight into etcd, as a host of another rq (or anything else with access to etcd) could: of the shape rq writes, with markup in its URL's path. */
const HOSTILE = {
  host: 'evil',
  url: `http://127.0.0.1:1/"><img/src=x/onerror=alert(2)>`,
  version: '3.0.0',
  started_at: new Date().toISOString(),
  instance: 'x',
  queues: { q9: { status: 'PAUSE', ready: 7, running: 1, workers: 4 } },
};
/** Markup where rq writes none (a version, a status): not taken at all (src/fleet/record-shapes.ts). */
const REFUSED = { ...HOSTILE, host: 'evil2', version: SCRIPT, queues: { q9: { ...HOSTILE.queues.q9, status: '<img src=x onerror=alert(3)>' } } };

const page = (h: Host, path = 'fleet') => fetch(`http://127.0.0.1:${h.root.port}/${path}`);

describe('the fleet page and rq queues --fleet', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    etcd = await EtcdProc.start();
    store = await EtcdStore.open({ endpoints: [etcd.url] });
    [a, b] = await Promise.all(['a', 'b'].map((n) => startHost(n, etcd.url)));
    await store.put(KEYS.host('evil2'), JSON.stringify(REFUSED));
    await store.put(KEYS.host('evil'), JSON.stringify(HOSTILE));
    await waitFor(async () => {
      const res = await page(a, 'fleet.json').catch(() => null);
      const v = res?.ok ? ((await res.json()) as { hosts: { host: string; queues: Record<string, { status: string }> }[] }) : null;
      return v && v.hosts.length === 3 && v.hosts.every((h) => h.host === 'evil' || h.queues.q1?.status === 'UP') ? v : null;
    }, 'a to see a, b and evil with their queues');
  }, 90_000);

  afterAll(async () => {
    for (const h of [a, b]) await stopHost(h);
    for (const h of ['evil', 'evil2']) await store?.delete(KEYS.host(h)).catch(() => undefined);
    store?.close();
    await etcd?.cleanup();
  }, 60_000);

  it('lists every host with its state, since, URL as a link and each queue with its figures', async () => {
    const res = await page(a);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const body = await res.text();
    expect(body).toContain('<h2>Fleet <span id="fleet-name">test</span></h2>');
    expect(body).toContain('This host is <strong>a</strong> (member since');
    expect(body).toMatch(/<tbody id="host-a" data-host="a" data-state="up">/);
    const url = `http://127.0.0.1:${b.root.port}`;
    expect(body).toContain(`<a class="host-url" href="${url}" rel="noopener noreferrer">${url}</a>`);
    expect(body).toContain(
      '<td class="name" data-col="queue">q1</td><td class="status up" data-col="status">UP</td><td class="num" data-col="ready">0</td><td class="num" data-col="running">0</td><td class="num" data-col="workers">2</td>',
    );
    expect(body).toContain('<script type="module" src="/js/fleet.js"></script>');
  });

  it('escapes what etcd holds: a hostile URL is text; a record with markup where rq writes none is not listed', async () => {
    const body = await (await page(a)).text();
    expect(body).not.toContain('<img');
    expect(body).toContain('href="http://127.0.0.1:1/&quot;&gt;&lt;img/src=x/onerror=alert(2)&gt;"');
    expect(body).not.toContain('evil2');
    expect(body).not.toContain('alert(3)');
    expect(body).not.toContain(SCRIPT);
  });

  it('links the page from the dashboard header on a host in a fleet', async () => {
    expect(await (await page(a, '')).text()).toContain('<a class="crumb nav-link" id="nav-fleet" href="/fleet">Fleet</a>');
  });

  it('`rq queues --fleet` prints one line per host and queue; --json the rows', async () => {
    const out = await run(BIN('rq'), ['queues', '--fleet', '--root', a.root.root]);
    expect(out.stdout.split('\n')).toEqual([
      'ok 3',
      'a/q1 UP ready 0 running 0 workers 2',
      'b/q1 UP ready 0 running 0 workers 2',
      `evil/q9 ${HOSTILE.queues.q9.status} ready 7 running 1 workers 4`,
      '',
    ]);
    const json = JSON.parse((await run(BIN('rq'), ['queues', '--fleet', '--json', '--root', a.root.root])).stdout) as unknown;
    expect(json).toEqual([
      { host: 'a', queue: 'q1', status: 'UP', ready: 0, running: 0, workers: 2 },
      { host: 'b', queue: 'q1', status: 'UP', ready: 0, running: 0, workers: 2 },
      { host: 'evil', queue: 'q9', ...HOSTILE.queues.q9 },
    ]);
  });

  it('shows a stopped host gone, with since when', async () => {
    const stoppedAt = Date.now();
    await b.mgr.stop();
    const body = await waitFor(async () => {
      const text = await (await page(a)).text();
      return text.includes('data-host="b" data-state="gone"') ? text : null;
    }, 'the page to show b gone');
    const row = /<tbody id="host-b" data-host="b" data-state="gone">([\s\S]*?)<\/tbody>/.exec(body)![1];
    expect(row).toContain('<td class="status down" rowspan="1" data-col="state">gone</td>');
    const since = /<time datetime="([^"]+)">/.exec(row)![1];
    expect(Date.parse(since)).toBeGreaterThanOrEqual(stoppedAt - 1000);
    expect(row).toMatch(/secs? ago\)/);
    expect(row).toContain('no queues');
    const lines = (await run(BIN('rq'), ['queues', '--fleet', '--root', a.root.root])).stdout.split('\n');
    expect(lines.filter((l) => l.startsWith('b/'))).toEqual([]);
  });
});
