// The queue page's message list and GET /q/<q>/messages.json: server paging, state (acknowledged too), text and created filters, sorts, refusals by parameter, and counts of a DOWN queue and of one whose process is not running.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { fillQueue } from '../helpers/fill-queue.js';
import { type WebRoot, startWebRoot } from './web-root.js';

const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
const N = 120;
let w: WebRoot;
let ids: string[];
/** i % 3: 0 err (every other one acknowledged), 1 done, 2 que. */
const stateOf = (i: number) => (i % 3 === 0 ? 'err' : i % 3 === 1 ? 'done' : 'que');

beforeAll(async () => {
  w = await startWebRoot({
    queues: { test: {} },
    setup: async (root) => {
      ids = await fillQueue(root, 'lists', N, {
        state: stateOf,
        createdAt: (i) => T0 + i * 60_000,
        fields: (i) => ({ param1: `p-${i}`, param2: i === 7 ? '<b>needle</b>' : 'x', due: Math.floor(T0 / 1000) + (N - i) }),
      });
      const err = queuePaths(root, 'lists').state.err;
      for (let i = 0; i < N; i += 6) await fs.rename(path.join(err, ids[i]), path.join(err, `.${ids[i]}`));
      // Paused: the que stays put while the lists are read.
      await fs.writeFile(path.join(root, 'config', 'lists.pause'), '');
    },
  });
}, 90_000);
afterAll(() => w?.stop());

const json = async (query: string) => {
  const res = await fetch(`${w.base}/q/lists/messages.json${query}`);
  return { status: res.status, total: res.headers.get('x-total-count'), body: await res.json() };
};
const idsOf = (body: { messages: { msg_id: string }[] }) => body.messages.map((m) => m.msg_id);

describe('GET /q/<q>/messages.json', () => {
  it('pages on the server, newest first, with the total', async () => {
    const first = await json('?limit=25');
    expect(first.status).toBe(200);
    expect(first.total).toBe(String(N));
    expect(first.body).toMatchObject({ total: N, offset: 0, limit: 25 });
    expect(idsOf(first.body)).toEqual(ids.slice(-25).reverse());
    const last = await json('?limit=25&offset=100');
    expect(idsOf(last.body)).toEqual(ids.slice(0, 20).reverse());
    expect(last.body.messages[0]).toMatchObject({
      msg_id: ids[19],
      state: 'done',
      param1: 'p-19',
      created: T0 + 19 * 60_000,
      count: 0,
      attempts: 1,
      status: 'done',
      duration_ms: null,
      total_ms: null,
      finished: T0 + 19 * 60_000,
    });
    expect(last.body.messages[2]).toMatchObject({ msg_id: ids[17], state: 'que', status: 'que', finished: null });
  });

  it('filters by state: err is the unacknowledged errors, acked the acknowledged ones', async () => {
    expect((await json('?state=que')).body.total).toBe(40);
    expect((await json('?state=done')).body.total).toBe(40);
    expect((await json('?state=err')).body.total).toBe(20);
    const acked = await json('?state=acked&sort=created&order=asc');
    expect(acked.body.total).toBe(20);
    expect(acked.body.messages[0]).toMatchObject({ msg_id: ids[0], state: 'err', acked: true });
  });

  it('filters by text and by created range; sorts by created or due either way', async () => {
    expect(idsOf((await json('?filter=needle')).body)).toEqual([ids[7]]);
    const range = await json('?from=2026-11-21T10:10&to=2026-11-21T10:20&sort=created&order=asc');
    expect(idsOf(range.body)).toEqual(ids.slice(10, 20));
    expect((await json('?from=2026-11-21&to=2026-11-21')).body.total).toBe(N);
    expect((await json('?from=2026-11-22')).body.total).toBe(0);
    expect(idsOf((await json('?sort=created&order=asc&limit=25')).body)).toEqual(ids.slice(0, 25));
    // Due falls as i grows.
    expect(idsOf((await json('?sort=due&order=asc&limit=25')).body)).toEqual(ids.slice(-25).reverse());
  });

  it('refuses each bad parameter with 400 naming it, what it expects and what it received', async () => {
    const cases: [string, string][] = [
      ['limit=7', 'limit: expected one of 25, 50, 100, 500, received "7"'],
      ['offset=-1', 'offset: expected a whole number from 0 to 10000000, received "-1"'],
      ['state=gone', 'state: expected one of prep, que, run, done, relayed, err, acked, or all, received "gone"'],
      ['sort=size', 'sort: expected one of created, due, finished, received "size"'],
      ['order=up', 'order: expected one of asc, desc, received "up"'],
      ['from=2026-02-31', 'from: expected a UTC date YYYY-MM-DD or date and time YYYY-MM-DDTHH:MM[:SS], received "2026-02-31"'],
      ['from=2026-11-22&to=2026-11-21T00:00', 'to: expected a time after from (2026-11-22), received "2026-11-21T00:00"'],
      ['limit[]=25', 'limit: expected one of 25, 50, 100, 500 (given once), received ["25"]'],
    ];
    for (const [q, text] of cases) {
      const r = await json(`?${q}`);
      expect([q, r.status, r.body]).toEqual([q, 400, ['fail', text]]);
    }
  });
});

describe('the queue page list', () => {
  it('shows a page of rows with state, times, attempts, param1 and status, the range and the pager', async () => {
    const html = await (await fetch(`${w.base}/q/lists?state=done&limit=25&offset=25`)).text();
    expect(html).toContain('id="page-range">26–40 of 40<');
    expect(html).toMatch(/<a class="button small" id="page-prev" href="\/q\/lists\?state=done&amp;limit=25"/);
    expect(html).toContain('<span class="button small disabled" id="page-next" aria-disabled="true">');
    expect(html).toContain('id="count-acked">20<');
    expect(html).toContain('id="count-err">20<');
    expect(html).toContain('id="count-all">120<');
    // Done messages are i = 118, 115, …, 1: the 26th is 43.
    const row = html.slice(html.indexOf(`<tr data-msg-id="${ids[43]}"`));
    expect(row).toMatch(new RegExp(`^<tr data-msg-id="${ids[43]}" data-state="done">`));
    expect(row.slice(0, row.indexOf('</tr>'))).toContain('<td class="param">p-43</td><td class="status">done</td>');
  });

  it('links acknowledged errors to their dotted page; escapes what it echoes', async () => {
    const acked = await (await fetch(`${w.base}/q/lists?state=acked&filter=p-6`)).text();
    expect(acked).toContain(`<a class="msg-link" href="/q/lists/.${ids[6]}">${ids[6]}</a>`);
    const needle = await (await fetch(`${w.base}/q/lists?filter=needle`)).text();
    expect(needle).toContain('Search: needle');
    const bad = await fetch(`${w.base}/q/lists?sort=%3Cscript%3Ealert(1)%3C/script%3E`);
    expect(bad.status).toBe(400);
    // The refusal is plain text, never HTML: what it echoes cannot run.
    expect(bad.headers.get('content-type')).toMatch(/^text\/plain/);
    const body = await bad.text();
    expect(body).toContain('sort: expected one of created, due, finished');
  });

  it('a DOWN queue still shows its counts and its list', async () => {
    expect(await w.mgr.cmd('down_queue', 'lists')).toEqual(expect.arrayContaining(['ok']));
    try {
      const html = await (await fetch(`${w.base}/q/lists`)).text();
      expect(html).toContain('id="queue-hard-down"');
      expect(html).toContain('id="count-que">40<');
      expect(html).toContain('id="page-range">1–50 of 120<');
    } finally {
      await w.mgr.cmd('up_queue', 'lists');
    }
  });

  it('a queue whose process is not running is counted from its directories', async () => {
    // Made after the start (a broken queue would fail /healthz): whether rq-mgr tries it or not, its process never answers.
    await fillQueue(w.root, 'broken', 5, { state: (i) => (i < 2 ? 'done' : 'que') });
    await fs.writeFile(queuePaths(w.root, 'broken').configFile, 'not json');
    const html = await (await fetch(`${w.base}/q/broken`)).text();
    expect(html).toContain('queue is COMPLETELY DOWN');
    expect(html).toContain('id="count-done">2<');
    expect(html).toContain('id="count-que">3<');
    expect(html).toContain('id="counts-source"');
  });
});
