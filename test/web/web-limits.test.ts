// GET /limits.json and the dashboard's #limits (rq-beyond §B12): rq-mgr's table of holders, waiters and orphans, a waiter's page, bad and hostile keys; rq-mgr not answering is a 503.
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GlobalConfig } from '../../src/config/global-config.js';
import { queuePaths, rootPaths } from '../../src/config/paths.js';
import { buildApp } from '../../src/web/app.js';
import { newPidInFile, pidInFile } from '../helpers/process-groups.js';
import { waitFor } from '../helpers/rq-root.js';
import { type WebRoot, send, waitState } from './web-root.js';
import { HOSTILE, HOSTILE_ESCAPED, KEY_TEXT, dependsLimitsWeb, section } from './depends-limits-harness.js';
import { inProcessDeps } from './in-process-app.js';

const web = dependsLimitsWeb();
const { groups, limits, page, forever, cancel } = web;
let w: WebRoot;
let B: string;
beforeAll(() => {
  ({ w, B } = web);
});

describe("GET /limits.json and the dashboard's #limits", () => {
  it("rq-mgr's table: holders, waiters in order; ?key= picks one; the page of a waiter says its key and place; a hostile key comes back escaped", async () => {
    const holder = await forever('lim', 'holder', { limit: 'reports' });
    const waiter = await send(B, 'lim', { param1: 'done', limit: 'reports' });
    const [, table] = await waitFor(async () => {
      const r = await limits();
      return r[1].reports?.waiting.length === 1 && r;
    }, 'the waiter to be parked');
    expect(table.reports).toEqual({
      concurrency: 1,
      source: 'config',
      holders: [{ ref: `lim/${holder}`, queue: 'lim', since: expect.any(Number), granted_at: expect.any(Number) }],
      waiting: [{ ref: `lim/${waiter}`, queue: 'lim', since: expect.any(Number), position: 1 }],
    });
    expect((await fetch(`${B}/limits.json`)).headers.get('cache-control')).toBe('no-store');
    expect(await limits('?key=reports')).toEqual([200, { reports: table.reports }]);
    expect(await limits('?key=none')).toEqual([200, {}]);
    expect(await page(`/q/lim/${waiter}`)).toContain(
      '<td id="field-waiting"> waiting for a slot of key <code class="limit-key">reports</code>, position 1 </td>',
    );
    expect(section(await page('/q/lim'), 'waiting')).toContain('id="waiting-limit-count">1<');
    const dash = section(await page('/'), 'limits');
    expect(dash).toContain('data-refresh="/limits.json"');
    expect(dash).toContain(
      '<tr data-key="reports"><td class="key"><code>reports</code></td><td class="in-use num busy">1/1</td>\n<td class="waiting num">1</td><td class="orphaned num">0</td><td class="source">config</td></tr>',
    );

    // A key is any text without control characters: markup in it is escaped wherever it shows.
    const other = await forever('lim', 'hostile', { limit: HOSTILE, limit_concurrency: 1 });
    const parked = await send(B, 'lim', { param1: 'done', limit: HOSTILE });
    await waitFor(async () => (await limits(`?key=${encodeURIComponent(HOSTILE)}`))[1][HOSTILE]?.waiting.length === 1, 'the hostile waiter to be parked');
    const mine = await page(`/q/lim/${parked}`);
    expect(mine).toContain(`<td id="field-waiting"> waiting for a slot of key <code class="limit-key">${HOSTILE_ESCAPED}</code>, position 1 </td>`);
    expect(mine).toContain(`<td id="field-limit"> ${HOSTILE_ESCAPED} </td>`);
    const board = section(await page('/'), 'limits');
    expect(board).toContain(`<tr data-key="${HOSTILE_ESCAPED}"><td class="key"><code>${HOSTILE_ESCAPED}</code></td><td class="in-use num busy">1/1</td>`);
    for (const doc of [mine, board]) expect(doc).not.toMatch(/<script>alert|<img src=x/);
    for (const id of [holder, other]) await cancel('lim', id);
    for (const id of [waiter, parked]) await waitState(B, 'lim', id, ['done']);
    expect(await limits()).toEqual([200, {}]);
    expect(section(await page('/'), 'limits')).toContain('<p class="muted" id="limits-empty">No concurrency keys in use.</p>');
  });

  it("an orphaned holder (its queue killed, not yet restarted) is counted and shown until the queue's next incarnation frees it", async () => {
    const holder = await forever('lim', 'orphan', { limit: 'reports' });
    const config = queuePaths(w.root, 'lim').configFile;
    const good = await fs.readFile(config, 'utf8');
    // The running queue keeps its config when the file turns bad; a restart cannot start until it is back.
    await fs.writeFile(config, '{ not json');
    try {
      process.kill(await w.mgr.waitQueueUp('lim'), 'SIGKILL');
      const [, table] = await waitFor(async () => {
        const r = await limits('?key=reports');
        return r[1].reports?.holders[0]?.orphaned === true && r;
      }, 'the holder to be orphaned');
      expect(table.reports.holders).toEqual([
        { ref: `lim/${holder}`, queue: 'lim', since: expect.any(Number), granted_at: expect.any(Number), orphaned: true },
      ]);
      expect(section(await page('/'), 'limits')).toContain('<td class="orphaned num bad">1</td>');
    } finally {
      await fs.writeFile(config, good);
    }
    // The restarted queue kills the leftover script, frees the slot and runs the message again (at-least-once).
    const pidFile = path.join(w.root, 'orphan.pid');
    const first = await pidInFile(pidFile);
    await waitFor(
      async () => {
        const r = await limits('?key=reports');
        return r[1].reports?.holders.length === 1 && r[1].reports.holders[0].orphaned === undefined;
      },
      'the slot freed and taken again',
      30_000,
    );
    groups.push(await newPidInFile(pidFile, first, "the rerun's pid"));
    expect(section(await page('/'), 'limits')).toContain('<td class="orphaned num">0</td>');
    await cancel('lim', holder);
    await waitState(B, 'lim', holder, ['err']);
  });

  it("a bad key is a 400 with rq-mgr's wording, before rq-mgr is asked", async () => {
    const bad: [string, string][] = [
      ['?key=', '""'],
      ['?key=a%01b', '"a\\u0001b"'],
      [`?key=${'k'.repeat(257)}`, `"${'k'.repeat(76)}...`],
      ['?key[]=a', '["a"]'],
      ['?key[a]=b', '{"a":"b"}'],
    ];
    for (const [q, received] of bad) expect(await limits(q), q).toEqual([400, ['fail', `key: expected ${KEY_TEXT}, received ${received}`]]);
  });
});

describe('rq-mgr not answering', () => {
  let root: string;
  let sock: net.Server | undefined;
  const conns = new Set<net.Socket>();
  const make = () => buildApp(inProcessDeps(root, { config: { host: '127.0.0.1', port: 1, env: 'test' } as GlobalConfig }));
  beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-weblimits-'));
    for (const d of ['config', 'queues', 'timers']) await fs.mkdir(path.join(root, d));
  });
  afterAll(async () => {
    for (const c of conns) c.destroy();
    await new Promise((r) => (sock ? sock.close(r) : r(undefined)));
    await fs.rm(root, { recursive: true, force: true });
  });

  it('/limits.json is a 503 saying so (nobody listening, or a listener that never answers); the dashboard shows it in #limits', async () => {
    const app = await make();
    try {
      const gone = await app.inject({ url: '/limits.json' });
      expect([gone.statusCode, gone.headers['content-type']]).toEqual([503, 'application/json; charset=utf-8']);
      expect(JSON.parse(gone.body)).toEqual([
        'fail',
        `rq-mgr did not answer limit_status (no reply from ${rootPaths(root).mgrSock}: ENOENT: no socket file (is the process running?))`,
      ]);
      const text = await app.inject({ url: '/limits.json', headers: { accept: 'text/html' } });
      expect(text.headers['content-type']).toMatch(/^application\/json/);
      // A bad key is refused before rq-mgr is asked.
      expect((await app.inject({ url: '/limits.json?key=' })).statusCode).toBe(400);
      const dash = await app.inject({ url: '/' });
      expect(dash.body).toMatch(/<p class="bad" id="limits-error">rq-mgr did not answer limit_status \(no reply from /);

      // Takes the connection and the command, and never answers.
      sock = net.createServer((c) => void conns.add(c));
      await new Promise<void>((r) => sock!.listen(rootPaths(root).mgrSock, r));
      const hung = await app.inject({ url: '/limits.json' });
      expect(hung.statusCode).toBe(503);
      expect(JSON.parse(hung.body)[1]).toMatch(/^rq-mgr did not answer limit_status \(/);
    } finally {
      await app.close();
    }
  });
});
