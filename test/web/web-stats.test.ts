// Statistics over HTTP against a real rq-mgr + web process (rq-beyond §B15): stats.json against the queue's own reply, failed.json groups and pages, the stats and group pages, bad input, unknown queues, DOWN.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import type { DayStats } from '../../src/ipc/stats-reply.js';
import { quantile } from '../../src/queue/observers/distribution.js';
import { QueueClients } from '../../src/web/queue-clients.js';
import { waitFor } from '../helpers/rq-root.js';
import { OUTCOME_SH, type OutcomeMix, runOutcomeMix } from './stats-fixture.js';
import { type WebRoot, postForm, startWebRoot, waitState } from './web-root.js';

let w: WebRoot;
let B: string;
let mix: OutcomeMix;
let gate: string;
let sockets: QueueClients;

beforeAll(async () => {
  w = await startWebRoot({ queues: { stats: { script: OUTCOME_SH, num_workers: 2 }, quiet: { script: OUTCOME_SH } } });
  B = w.base;
  gate = path.join(w.root, 'gate');
  sockets = new QueueClients({ sockPath: (q) => queuePaths(w.root, q).sock });
  mix = await runOutcomeMix(B, 'stats', gate);
}, 60_000);
afterAll(async () => {
  sockets?.close();
  await w?.stop();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function json(res: Response, status = 200): Promise<any> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return res.json();
}

const ask = async (q: string): Promise<DayStats> => {
  const r = await sockets.client(q).stats();
  if (!r.ok) throw new Error(r.text);
  return r.value;
};

describe('GET /q/<q>/stats.json', () => {
  it("is the queue's stats reply, with p50/p95/p99 of wait and run read off its histograms", async () => {
    const res = await fetch(`${B}/q/stats/stats.json`);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const web = await json(res);
    const queue = await ask('stats');
    const { p50, p95, p99, ...wait } = web.wait;
    const { p50: r50, p95: r95, p99: r99, ...run } = web.run;
    expect(wait).toEqual(queue.wait);
    expect(run).toEqual(queue.run);
    expect([p50, p95, p99]).toEqual([0.5, 0.95, 0.99].map((q) => quantile(queue.wait, q)));
    expect([r50, r95, r99]).toEqual([0.5, 0.95, 0.99].map((q) => quantile(queue.run, q)));
    // The per-minute series moves on with the clock: its sum over the hour does not.
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    // So does oldest_ready_s: the queue measures it against its clock at each ask, even with none ready.
    const { per_minute: webMinutes, oldest_ready_s: webOldest, ...webLive } = web.live;
    const { per_minute: queueMinutes, oldest_ready_s: queueOldest, ...queueLive } = queue.live!;
    expect(webLive).toEqual(queueLive);
    expect(Math.abs(webOldest - queueOldest)).toBeLessThan(1);
    expect([sum(webMinutes.done), sum(webMinutes.err)]).toEqual([sum(queueMinutes.done), sum(queueMinutes.err)]);
    const { wait: _w, run: _r, live: _l, ...counters } = web;
    const { wait: _qw, run: _qr, live: _ql, ...queueCounters } = queue;
    expect(counters).toEqual(queueCounters);

    // What the mix ran: 7 made and started, 3 done, 4 err (one of them fatal); the 1.2 s run is the slowest.
    expect(web).toMatchObject({ queue: 'stats', created: 7, started: 7, done: 3, err: 4 });
    expect(web.outcomes.fatal).toBe(1);
    expect(web.run.count).toBe(7);
    expect(web.run.p99).toBeGreaterThanOrEqual(1.2);
    expect(web.run.p50).toBeLessThanOrEqual(1);
    expect(sum(web.hourly.done)).toBe(3);
    expect(sum(web.hourly.err)).toBe(4);
  });

  it('reads a stored or empty day by ?date=, without live figures; a date that names no day is a 400 naming date', async () => {
    const old = await json(await fetch(`${B}/q/stats/stats.json?date=20200101`));
    expect(old).toMatchObject({ queue: 'stats', date: '20200101', created: 0, done: 0, wait: { count: 0, p50: null, p95: null, p99: null } });
    expect(old.live).toBeUndefined();
    // A day past histogram_history_days keeps its count but no bins: no quantiles rather than max for each.
    const trimmed = { date: '20200102', created: 2, started: 2, done: 2, run: { count: 2, mean: 3, variance: 0, min: 3, max: 3 } };
    const dir = queuePaths(w.root, 'stats').statsDir;
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(dir, '20200102.json'), JSON.stringify(trimmed));
    expect((await json(await fetch(`${B}/q/stats/stats.json?date=20200102`))).run).toMatchObject({ count: 2, p50: null, p99: null });
    for (const bad of ['20261131', 'yesterday', '2026-11-21', '202611210']) {
      const body = await json(await fetch(`${B}/q/stats/stats.json?date=${bad}`), 400);
      expect(body).toEqual(['fail', `date: expected a UTC day as YYYYMMDD, such as 20261121, received "${bad}"`]);
    }
  });

  it('an unknown queue is a 404 in JSON, for both routes', async () => {
    for (const p of ['/q/nosuch/stats.json', '/q/nosuch/failed.json', '/q/nosuch/stats.json?date=bad']) {
      expect(await json(await fetch(B + p), 404), p).toEqual(['fail', 'Queue not found: nosuch']);
    }
  });
});

describe('GET /q/<q>/failed.json', () => {
  it('groups the err messages by outcome, error class or failure kind', async () => {
    expect(await json(await fetch(`${B}/q/stats/failed.json`))).toEqual({ groups: { ValueError: 2, HTTP503: 1, fatal: 1 } });
    expect(await json(await fetch(`${B}/q/quiet/failed.json`))).toEqual({ groups: {} });
  });

  it("pages one group's messages, newest first, each with its message page", async () => {
    const newestFirst = [...mix.valueError].sort().reverse();
    const all = await json(await fetch(`${B}/q/stats/failed.json?group=ValueError`));
    expect(all).toMatchObject({ group: 'ValueError', total: 2 });
    expect(all.messages.map((m: { msg_id: string }) => m.msg_id)).toEqual(newestFirst);
    expect(all.messages[0]).toMatchObject({ outcome: 'failed', url: `/q/stats/${newestFirst[0]}`, text: expect.stringContaining('ValueError: bad input') });
    const first = await json(await fetch(`${B}/q/stats/failed.json?group=ValueError&limit=1`));
    const second = await json(await fetch(`${B}/q/stats/failed.json?group=ValueError&offset=1&limit=1`));
    expect([first.total, second.total]).toEqual([2, 2]);
    expect([...first.messages, ...second.messages].map((m: { msg_id: string }) => m.msg_id)).toEqual(newestFirst);
    expect(await json(await fetch(`${B}/q/stats/failed.json?group=NoSuchError`))).toEqual({ group: 'NoSuchError', total: 0, messages: [] });
  });

  it('bad input is a 400 naming the field', async () => {
    const cases: [string, string][] = [
      [
        'group=two%20words',
        'group: expected a failure group: an outcome, an error class such as ValueError, or a failure kind (1-64 characters, no blank or colon), received "two words"',
      ],
      ['group=ValueError&limit=0', 'limit: expected a whole number from 1 to 1000, received "0"'],
      ['group=ValueError&offset=-1', 'offset: expected a whole number from 0 to 10000000, received "-1"'],
      ['limit=5', "lacking 'group' field"],
    ];
    for (const [query, text] of cases) expect(await json(await fetch(`${B}/q/stats/failed.json?${query}`), 400), query).toEqual(['fail', text]);
  });
});

describe('while the queue is DOWN', () => {
  it('both routes and both pages still answer: the commands are read-only', async () => {
    await w.mgr.cmd('down_queue', 'quiet');
    try {
      await waitFor(async () => (await (await fetch(`${B}/q/quiet.txt`)).text()) === '\nstatus: DOWN\n\n', 'DOWN status text');
      expect(await json(await fetch(`${B}/q/quiet/stats.json`))).toMatchObject({ queue: 'quiet', created: 0 });
      expect(await json(await fetch(`${B}/q/quiet/failed.json`))).toEqual({ groups: {} });
      for (const p of ['/q/quiet/stats', '/q/quiet/failed']) expect((await fetch(B + p)).status, p).toBe(200);
    } finally {
      await w.mgr.cmd('up_queue', 'quiet');
    }
  });
});

describe('the stats and failure-group pages', () => {
  it("shows the day's counters as text, chart boxes with their data, the groups linking to their pages", async () => {
    const day = await json(await fetch(`${B}/q/stats/stats.json`));
    const res = await fetch(`${B}/q/stats/stats`);
    expect(res.status).toBe(200);
    const page = await res.text();
    for (const k of ['created', 'started', 'done', 'err', 'relayed', 'failures', 'retries', 'resends', 'timeouts', 'stalls'])
      expect(page).toContain(`<dd id="stat-${k}">${day[k]}</dd>`);
    expect(page).toContain(`<dd id="outcome-fatal">1</dd>`);
    for (const chart of ['chart-minute', 'chart-hourly', 'chart-wait', 'chart-run'])
      expect(page).toMatch(new RegExp(`id="${chart}" data-chart="\\{&quot;kind`));
    expect(page).toContain('<script type="module" src="/js/stats-charts.js">');
    expect(page).toContain('<link rel="stylesheet" href="/css/uPlot.min.css">');
    expect(page).toContain('href="/q/stats/failed?group=ValueError"');
    expect(await (await fetch(`${B}/q/stats`)).text()).toContain('<a id="stats-link" href="/q/stats/stats">statistics</a>');
    // A stored day from the navigation and from the date picker's YYYY-MM-DD; a day that does not exist is a 400.
    expect(await (await fetch(`${B}/q/stats/stats?date=2020-01-02`)).text()).toContain('<dd id="stat-created">2</dd>');
    expect((await fetch(`${B}/q/stats/stats?date=20261131`)).status).toBe(400);
    expect((await fetch(`${B}/q/nosuch/stats`)).status).toBe(404);
  });

  it('the uPlot module and stylesheet are served from node_modules by the web itself', async () => {
    const js = await fetch(`${B}/js/uPlot.esm.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    expect(await js.text()).toContain('export { uPlot as default }');
    const css = await fetch(`${B}/css/uPlot.min.css`);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect(await css.text()).toContain('.uplot');
  });

  it("a group's page lists exactly its messages; requeue_errs with the group reruns only them", async () => {
    const page = await (await fetch(`${B}/q/stats/failed?group=ValueError`)).text();
    const listed = [...page.matchAll(/<tr data-msg-id="([^"]+)">/g)].map((m) => m[1]);
    expect(listed.sort()).toEqual([...mix.valueError].sort());
    expect(page).toContain('data-confirm="Run the 2 err messages of group ValueError of stats again?"');
    await fs.writeFile(gate, '');
    expect(await json(await postForm(`${B}/q/stats/requeue_errs`, { x_format: 'json', group: 'ValueError' }))).toEqual(['ok', 2]);
    for (const id of mix.valueError) await waitState(B, 'stats', id, ['done']);
    expect(await json(await fetch(`${B}/q/stats/failed.json`))).toEqual({ groups: { HTTP503: 1, fatal: 1 } });
    for (const id of [...mix.http503, ...mix.fatal]) expect(await (await fetch(`${B}/q/stats/${id}/state.json`)).json()).toEqual(['err']);
  });
});
