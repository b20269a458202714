// Dependencies and limits on the web against a real rq-mgr, queues and scripts (rq-beyond §B8, §B12, §B1.11): POST undepend (JSON and HTML), /limits.json, the dashboard's #limits,
// the message and queue pages, the form's fields; bad input is a 4xx with the queue's text and changes nothing, hostile values come back escaped, rq-mgr not answering is a 503.
import { createRequire } from 'node:module';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GlobalConfig } from '../../src/config/global-config.js';
import { queuePaths, rootPaths } from '../../src/config/paths.js';
import { silentLogger } from '../../src/log.js';
import { MgrClient } from '../../src/ipc/mgr-client.js';
import { TimersClient } from '../../src/ipc/timers-client.js';
import { buildApp } from '../../src/web/app.js';
import { chartLibFiles } from '../../src/web/chart-lib.js';
import { QueueClients } from '../../src/web/queue-clients.js';
import { Urls } from '../../src/web/urls.js';
import { idText } from '../../src/web/views/id-text.js';
import { waitingWords } from '../../src/web/views/waiting-view.js';
import { killLeftoverGroups, newPidInFile, pidInFile } from '../helpers/process-groups.js';
import { PROJECT, waitFor } from '../helpers/rq-root.js';
import { contentSnapshot } from './message-fixture.js';
import { type WebRoot, cookiesOf, postForm, send, startWebRoot, waitState } from './web-root.js';

/** A ref as a page writes it: a <wbr> after each slash and dot, so it wraps only there (views/id-text.ts). */
const wrapped = (ref: string) => idText(ref).value;

let w: WebRoot;
let B: string;
const groups = killLeftoverGroups();

beforeAll(async () => {
  w = await startWebRoot({
    queues: { up: {}, dn: {}, lim: { num_workers: 3 }, form: {} },
    setup: async (root) => void (await fs.writeFile(rootPaths(root).limitsFile, JSON.stringify({ reports: 1 }))),
  });
  B = w.base;
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

const later = () => Math.floor(Date.now() / 1000) + 3600;
const queued = (q: string, fields: Record<string, unknown> = {}) => send(B, q, { param1: 'done', due: later(), ...fields });
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const message = async (q: string, id: string): Promise<any> => (await fetch(`${B}/q/${q}/${id}.json`)).json();
const undepend = async (q: string, id: string, form: Record<string, string> | URLSearchParams) => {
  const body = form instanceof URLSearchParams ? form : new URLSearchParams({ x_format: 'json', ...form });
  const res = await fetch(`${B}/q/${q}/${id}/undepend`, { method: 'POST', body, redirect: 'manual' });
  return [res.status, await res.json()];
};
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const limits = async (query = ''): Promise<[number, any]> => {
  const res = await fetch(`${B}/limits.json${query}`);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return [res.status, await res.json()];
};
const page = async (p: string, init: RequestInit = {}) => {
  const res = await fetch(B + p, init);
  expect(res.headers.get('content-type'), p).toMatch(/^text\/html/);
  return res.text();
};
/** The markup from the element with `id` to the end of its section. */
const section = (doc: string, id: string) => {
  const at = doc.indexOf(`id="${id}"`);
  expect(at, id).toBeGreaterThan(-1);
  return doc.slice(at, doc.indexOf('</section>', at));
};
/** Every file of queue `q` by content, but the blank-dir pool a create refills in the background. */
const spool = async (q: string) => Object.entries(await contentSnapshot(w.root)).filter(([p]) => p.startsWith(`queues/${q}/`) && !p.startsWith(`queues/${q}/.blank/`));
/** A `forever` script holding its run until cancelled; its group is killed after the test whatever happens. */
async function forever(q: string, name: string, fields: Record<string, unknown>): Promise<string> {
  const pidFile = path.join(w.root, `${name}.pid`);
  const id = await send(B, q, { param1: 'forever', param2: pidFile, ...fields });
  await waitState(B, q, id, ['run']);
  groups.push(await pidInFile(pidFile));
  return id;
}
const cancel = (q: string, id: string) => postForm(`${B}/q/${q}/${id}/cancel`, { x_format: 'json' });

const REF_TEXT = 'a message ref such as test/20261121.1643.46.613.2164022';
const NOT_BOTH = 'give depends or all, not both and not neither';
const KEY_TEXT = 'a key of 1-256 characters without control characters';
const HOSTILE = `<script>alert(1)</script>"'><img src=x onerror=1>`;
const HOSTILE_ESCAPED = '&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&gt;&lt;img src=x onerror=1&gt;';

describe('POST /q/<q>/<id>/undepend', () => {
  it('JSON: drops one ref, then the rest (a full id, an array, a JSON body, all); the reply is what is still awaited; the message then runs', async () => {
    const [x1, x2, x3] = [await queued('up'), await queued('up'), await queued('up')];
    const d = await send(B, 'dn', { param1: 'done', depends: `up/${x1},up/${x2},up/${x3}` });
    expect(await undepend('dn', d, { depends: `up/${x1}` })).toEqual([200, ['ok', [`up/${x2}`, `up/${x3}`]]]);
    // A ref it does not wait for is ignored.
    expect(await undepend('dn', d, { depends: 'up/20200101.0000.00.000.1' })).toEqual([200, ['ok', [`up/${x2}`, `up/${x3}`]]]);
    expect(await message('dn', d)).toMatchObject({ state: 'que', depends: [`up/${x2}`, `up/${x3}`], waiting: { reason: 'dependencies', waiting_on: [`up/${x2}`, `up/${x3}`] } });
    // A full id of this host, as depends[]=: the queue makes it a ref.
    expect(await undepend('dn', d, new URLSearchParams([['x_format', 'json'], ['depends[]', `http://127.0.0.1:${w.port}/q/up/${x2}`]]))).toEqual([200, ['ok', [`up/${x3}`]]]);
    const json = await fetch(`${B}/q/dn/${d}/undepend`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ x_format: 'json', depends: [`up/${x3}`] }) });
    expect([json.status, await json.json()]).toEqual([200, ['ok', []]]);
    await waitState(B, 'dn', d, ['done']);

    const d2 = await send(B, 'dn', { param1: 'done', depends: [`up/${x1}`, `up/${x2}`] });
    expect(await undepend('dn', d2, { all: 'true' })).toEqual([200, ['ok', []]]);
    await waitState(B, 'dn', d2, ['done']);
    expect(await undepend('dn', d2, { all: '1' })).toEqual([409, ['fail', 'msg is not waiting on dependencies']]);
    expect(await undepend('dn', '20200101.0000.00.000.1', { all: 'true' })).toEqual([404, ['fail', 'msg not found']]);
    for (const x of [x1, x2, x3]) await cancel('up', x);
  });

  it('HTML: a flash and 303 to the message page or back; a refusal is the classic Couldn\'t text', async () => {
    const [x1, x2] = [await queued('up'), await queued('up')];
    const d = await send(B, 'dn', { param1: 'done', depends: [`up/${x1}`, `up/${x2}`] });
    const one = await postForm(`${B}/q/dn/${d}/undepend`, { depends: `up/${x1}` });
    expect([one.status, one.headers.get('location')]).toEqual([303, `${w.origin}/q/dn/${d}`]);
    expect(await page(`/q/dn/${d}`, { headers: { cookie: cookiesOf(one) } })).toMatch(new RegExp(`<div id="flash-notice"[^>]*>Still waiting on up/${x2.replaceAll('.', '\\.')}<`));
    const all = await postForm(`${B}/q/dn/${d}/undepend`, { all: 'on', back: '/q/dn' });
    expect([all.status, all.headers.get('location')]).toEqual([303, `${w.origin}/q/dn`]);
    expect(await page('/q/dn', { headers: { cookie: cookiesOf(all) } })).toMatch(/<div id="flash-notice"[^>]*>No longer waiting on dependencies</);
    await waitState(B, 'dn', d, ['done']);
    const again = await postForm(`${B}/q/dn/${d}/undepend`, { all: 'on' });
    expect([again.status, await again.text()]).toEqual([409, '409 - Couldn\'t undepend message. ["fail", "msg is not waiting on dependencies"].']);
    const none = await postForm(`${B}/q/dn/20200101.0000.00.000.1/undepend`, { all: 'on' });
    expect([none.status, await none.text()]).toEqual([404, '404 - Couldn\'t undepend message. ["fail", "msg not found"].']);
    const bad = await postForm(`${B}/q/dn/${d}/undepend`, { depends: 'x' });
    expect([bad.status, bad.headers.get('content-type'), await bad.text()]).toEqual([400, 'text/plain; charset=utf-8', `400 - depends[0]: expected ${REF_TEXT}, received "x"`]);
    for (const x of [x1, x2]) await cancel('up', x);
  });

  it('bad input is a 4xx naming the field, sends nothing and changes nothing; a DOWN queue refuses with 503', async () => {
    const x = await queued('up');
    const d = await send(B, 'dn', { param1: 'done', depends: `up/${x}` });
    const before = await spool('dn');
    const msgBefore = await message('dn', d);
    const many = Array.from({ length: 1001 }, (_, i) => `up/20200101.0000.00.000.${i + 1}`).join(',');
    const refusals: [Record<string, string> | URLSearchParams, string][] = [
      [{}, NOT_BOTH],
      [{ depends: '' }, NOT_BOTH],
      [{ all: 'false' }, NOT_BOTH],
      [{ all: 'true', depends: `up/${x}` }, NOT_BOTH],
      [{ all: 'maybe' }, 'all: expected true or false, received "maybe"'],
      [new URLSearchParams([['x_format', 'json'], ['all[]', '1']]), 'all: expected true or false, received ["1"]'],
      [{ depends: 'x' }, `depends[0]: expected ${REF_TEXT}, received "x"`],
      [{ depends: `up/${x},${HOSTILE}` }, `depends[1]: expected ${REF_TEXT}, received ${JSON.stringify(HOSTILE)}`],
      [{ depends: `../up/${x}` }, `depends[0]: expected ${REF_TEXT}, received "../up/${x}"`],
      [{ depends: many }, 'depends: expected at most 1000 refs, received 1001'],
      // The queue knows its own host URL: another host's full id is refused there.
      [{ depends: `http://elsewhere.example:3333/q/up/${x}` }, `depends[0]: only messages of this host can be depended on, received http://elsewhere.example:3333/q/up/${x}`],
    ];
    for (const [form, text] of refusals) expect(await undepend('dn', d, form), String(new URLSearchParams(form as Record<string, string>)).slice(0, 80)).toEqual([400, ['fail', text]]);
    const obj = await fetch(`${B}/q/dn/${d}/undepend`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ x_format: 'json', depends: { a: 1 } }) });
    expect([obj.status, await obj.json()]).toEqual([400, ['fail', 'depends: expected an array of message refs (<queue>/<id>) or a comma-separated string, received {"a":1}']]);
    expect((await postForm(`${B}/q/nosuch/${d}/undepend`, { x_format: 'json', all: 'true' })).status).toBe(404);
    expect((await postForm(`${B}/q/dn/not-an-id/undepend`, { x_format: 'json', all: 'true' })).status).toBe(404);
    expect((await postForm(`${B}/q/dn/${d}/undepend`, { all: 'true' }, { origin: 'http://evil.example' })).status).toBe(403);
    await w.mgr.cmd('down_queue', 'dn');
    try {
      expect(await undepend('dn', d, { all: 'true' })).toEqual([503, ['fail', 'status: DOWN']]);
    } finally {
      await w.mgr.cmd('up_queue', 'dn');
    }
    expect(await spool('dn')).toEqual(before);
    expect(await message('dn', d)).toEqual(msgBefore);
    await cancel('dn', d);
    await cancel('up', x);
  });
});

describe('message and queue pages', () => {
  it('the message page shows the refs linked with their states, the policy, the dependents, the waiting reason in words, and undepend behind confirmations', async () => {
    const ok = await send(B, 'up', { param1: 'done' });
    const failing = await send(B, 'up', { param1: 'err' });
    const pending = await queued('up');
    await waitState(B, 'up', ok, ['done']);
    await waitState(B, 'up', failing, ['err']);
    const d = await send(B, 'dn', { param1: 'done', depends: [`up/${ok}`, `up/${failing}`, `up/${pending}`], depends_fail: 'wait' });
    await waitFor(async () => Object.keys((await message('dn', d)).depends_done ?? {}).length === 2, 'both finished dependencies resolved');
    const doc = await page(`/q/dn/${d}`);
    expect(doc).toContain(`<td id="field-waiting"> waiting on 2 dependencies: <a class="ref" href="/q/up/${failing}">${wrapped(`up/${failing}`)}</a>, <a class="ref" href="/q/up/${pending}">${wrapped(`up/${pending}`)}</a> </td>`);
    const card = section(doc, 'dependencies');
    expect(card).toContain('if one fails: <span id="depends-fail">wait</span>');
    const row = (ref: string) => card.slice(card.indexOf(`<tr data-ref="${ref}">`), card.indexOf('</tr>', card.indexOf(`<tr data-ref="${ref}">`)));
    expect(row(`up/${ok}`)).toContain(`<td class="ref"><a class="ref" href="/q/up/${ok}">${wrapped(`up/${ok}`)}</a></td><td class="state">done</td><td class="action"></td>`);
    // Policy wait: the failed one is resolved as err but still awaited (a requeue and success lets the message go).
    expect(row(`up/${failing}`)).toContain('<td class="state">err:failed (still awaited)</td>');
    expect(row(`up/${pending}`)).toContain('<td class="state">awaited</td>');
    expect(row(`up/${pending}`)).toContain(`<form class="inline" method="post" action="/q/dn/${d}/undepend" data-confirm="Stop waiting for up/${pending}?"><input type="hidden" name="depends" value="up/${pending}">`);
    expect(card).toContain(`data-confirm="Stop waiting for all 2 dependencies of ${d}? It can then run at once."><input type="hidden" name="all" value="true"><button type="submit" id="btn-undepend-all"`);
    // Not repeated in the full field list; confirm.js (the confirm prompts) is on the page.
    for (const f of ['depends', 'depends_fail', 'depends_done', 'dependents']) expect(doc).not.toContain(`id="field-${f}"`);
    expect(doc.split('id="field-waiting"').length).toBe(2);
    expect(doc).toContain('<script type="module" src="/js/confirm.js"></script>');
    // The dependency's page links back to its dependents.
    expect(section(await page(`/q/up/${pending}`), 'dependencies')).toContain(`<p id="dependents">Dependents (1): <a class="ref" href="/q/dn/${d}">${wrapped(`dn/${d}`)}</a></p>`);
    // A dependency already done registers nothing; one in err does (policy wait hears of a requeue).
    expect(await page(`/q/up/${ok}`)).not.toContain('id="dependencies"');
    expect(await page(`/q/up/${failing}`)).toContain(`<a class="ref" href="/q/dn/${d}">${wrapped(`dn/${d}`)}</a>`);
    // A message without either has no card; the other reasons in words.
    const delayed = await queued('dn');
    const plain = await page(`/q/dn/${delayed}`);
    expect(plain).not.toContain('id="dependencies"');
    expect(plain).toMatch(/<td id="field-waiting"> delayed until <time datetime="\d{4}-\d\d-\d\dT[\d:.]+Z">/);

    // Queue page: counts per reason, linking to waiting.json?reason=.
    const queue = section(await page('/q/dn'), 'waiting');
    expect(queue).toContain('<a id="waiting-dependencies" data-reason="dependencies" href="/q/dn/waiting.json?reason=dependencies">dependencies</a> <span class="badge" id="waiting-dependencies-count">1</span>');
    expect(queue).toMatch(/id="waiting-delayed-count">[1-9]\d*</);
    expect(queue).toContain('id="waiting-limit-count">0<');
    const listed = (await (await fetch(`${B}/q/dn/waiting.json?reason=dependencies`)).json()) as { msg_id: string }[];
    expect(listed.map((e) => e.msg_id)).toEqual([d]);
    for (const [q, id] of [['dn', d], ['dn', delayed], ['up', pending]]) await cancel(q, id);
  });
});

describe('the waiting reason in words', () => {
  it('tells each reason, links refs through this server (under relative_root), and escapes what it does not know', () => {
    const urls = new Urls('/rq', '127.0.0.1:3333');
    const words = (w: unknown) => waitingWords(w, urls)?.value ?? null;
    expect(words({ reason: 'ready' })).toBe('ready to run');
    expect(words({ reason: 'delayed', due: 1795641311 })).toBe('delayed until <time datetime="2026-11-25T21:15:11.000Z">2026-11-25T21:15:11.000Z</time>');
    expect(words({ reason: 'coalesced', into: 'http://127.0.0.1:3333/rq/q/test/20261125.2105.11.541.2147444' })).toBe(
      `coalesced into <a class="ref" href="/rq/q/test/20261125.2105.11.541.2147444">${wrapped('http://127.0.0.1:3333/rq/q/test/20261125.2105.11.541.2147444')}</a>`,
    );
    expect(words({ reason: 'dependencies', waiting_on: ['a/20261125.2105.11.541.1'] })).toBe(`waiting on 1 dependency: <a class="ref" href="/rq/q/a/20261125.2105.11.541.1">${wrapped('a/20261125.2105.11.541.1')}</a>`);
    expect(words({ reason: 'dependencies', waiting_on: ['a/20261125.2105.11.541.1', '../x'] })).toBe(`waiting on 2 dependencies: <a class="ref" href="/rq/q/a/20261125.2105.11.541.1">${wrapped('a/20261125.2105.11.541.1')}</a>, ../x`);
    expect(words({ reason: 'limit', key: 'api:acme', position: 3 })).toBe('waiting for a slot of key <code class="limit-key">api:acme</code>, position 3');
    expect(words({ reason: 'limit', key: 'api:acme', position: 0 })).toBe('granted a slot of key <code class="limit-key">api:acme</code>, starting');
    expect(words({ reason: '<b>' })).toBe('&lt;b&gt;');
    expect(words(undefined)).toBeNull();
    expect(words('ready')).toBeNull();
  });
});

describe('GET /limits.json and the dashboard\'s #limits', () => {
  it('rq-mgr\'s table: holders, waiters in order; ?key= picks one; the page of a waiter says its key and place; a hostile key comes back escaped', async () => {
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
    expect(await page(`/q/lim/${waiter}`)).toContain('<td id="field-waiting"> waiting for a slot of key <code class="limit-key">reports</code>, position 1 </td>');
    expect(section(await page('/q/lim'), 'waiting')).toContain('id="waiting-limit-count">1<');
    const dash = section(await page('/'), 'limits');
    expect(dash).toContain('data-refresh="/limits.json"');
    expect(dash).toContain('<tr data-key="reports"><td class="key"><code>reports</code></td><td class="in-use num busy">1/1</td>\n<td class="waiting num">1</td><td class="orphaned num">0</td><td class="source">config</td></tr>');

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

  it('an orphaned holder (its queue killed, not yet restarted) is counted and shown until the queue\'s next incarnation frees it', async () => {
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
      expect(table.reports.holders).toEqual([{ ref: `lim/${holder}`, queue: 'lim', since: expect.any(Number), granted_at: expect.any(Number), orphaned: true }]);
      expect(section(await page('/'), 'limits')).toContain('<td class="orphaned num bad">1</td>');
    } finally {
      await fs.writeFile(config, good);
    }
    // The restarted queue kills the leftover script, frees the slot and runs the message again (at-least-once).
    const pidFile = path.join(w.root, 'orphan.pid');
    const first = await pidInFile(pidFile);
    await waitFor(async () => {
      const r = await limits('?key=reports');
      return r[1].reports?.holders.length === 1 && r[1].reports.holders[0].orphaned === undefined;
    }, 'the slot freed and taken again', 30_000);
    groups.push(await newPidInFile(pidFile, first, 'the rerun\'s pid'));
    expect(section(await page('/'), 'limits')).toContain('<td class="orphaned num">0</td>');
    await cancel('lim', holder);
    await waitState(B, 'lim', holder, ['err']);
  });

  it('a bad key is a 400 with rq-mgr\'s wording, before rq-mgr is asked', async () => {
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

describe('the new-message form', () => {
  it('has depends, depends_fail (a select), limit and limit_concurrency in Advanced, hideable by form.json; empty ones mean unset', async () => {
    const doc = await page('/q/form/new_message');
    const advanced = doc.slice(doc.indexOf('id="mesg_advanced"'), doc.indexOf('</details>'));
    expect(advanced).toContain('<input type="text" id="mesg_depends" name="mesg[depends]" value="">');
    expect(advanced).toContain('<select id="mesg_depends_fail" name="mesg[depends_fail]"><option value="">default (fail)</option><option value="fail">fail</option><option value="run">run</option><option value="wait">wait</option></select>');
    expect(advanced).toContain('<input type="text" id="mesg_limit" name="mesg[limit]" value="">');
    expect(advanced).toContain('<input type="text" id="mesg_limit_concurrency" name="mesg[limit_concurrency]" value="">');
    await fs.writeFile(queuePaths(w.root, 'form').formFile, JSON.stringify({ default: 'hidden', mesg_param1: {}, mesg_depends: { label: 'After', help: 'refs' } }));
    try {
      const hidden = await page('/q/form/new_message');
      expect(hidden).toContain('<div class="field" id="mesg_depends_field">\n  <label for="mesg_depends">After</label>');
      expect(hidden).toContain('<p class="help note" id="mesg_depends_help">refs</p>');
      for (const f of ['depends_fail', 'limit', 'limit_concurrency']) expect(hidden).toContain(`<div class="field" id="mesg_${f}_field" style="display: none;">`);
    } finally {
      await fs.rm(queuePaths(w.root, 'form').formFile);
    }

    // The form as a browser posts it: every Advanced field present, most of them empty.
    const x = await queued('up');
    const empty = ['priority', 'max_retries', 'timeout', 'depends', 'depends_fail', 'limit', 'limit_concurrency'].map((f) => [`mesg[${f}]`, ''] as [string, string]);
    const post = (extra: [string, string][]) => fetch(`${B}/q/form/new_message`, { method: 'POST', body: new URLSearchParams([['x_format', 'html'], ['mesg[dest]', 'form'], ['mesg[param1]', 'done'], ...empty, ...extra]) });
    const plain = await post([]);
    expect(plain.status).toBe(200);
    const plainId = /id="result-link">[^<]*\/q\/form\/([^<]+)</.exec(await plain.text())![1];
    expect(await message('form', plainId)).not.toHaveProperty('limit');
    const set = await post([['mesg[depends]', `up/${x}`], ['mesg[depends_fail]', 'run'], ['mesg[limit]', 'reports']]);
    const setId = /id="result-link">[^<]*\/q\/form\/([^<]+)</.exec(await set.text())![1];
    expect(await message('form', setId)).toMatchObject({ depends: [`up/${x}`], depends_fail: 'run', limit: 'reports', waiting: { reason: 'dependencies' } });

    const before = await spool('form');
    const bad = await post([['mesg[limit_concurrency]', '0'], ['mesg[limit]', 'k']]);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('<p id="result-error" class="bad">fail - limit_concurrency: expected a whole number 1-10000, received &quot;0&quot;</p>');
    const dep = await post([['mesg[depends]', 'up/20200101.0000.00.000.1']]);
    expect([dep.status, await dep.text()]).toEqual([400, expect.stringContaining('fail - depends[0]: no message up/20200101.0000.00.000.1')]);
    // A JSON client's empty limit is its own value, refused by the queue.
    const json = await fetch(`${B}/q/form/new_message`, { method: 'POST', body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'form', limit: '' }) }) });
    expect([json.status, await json.json()]).toEqual([400, ['fail', `limit: expected ${KEY_TEXT}, received ""`]]);
    expect(await spool('form')).toEqual(before);
    await cancel('form', setId);
    await cancel('up', x);
  });
});

describe('rq-mgr not answering', () => {
  let root: string;
  let sock: net.Server | undefined;
  const conns = new Set<net.Socket>();
  const make = () =>
    buildApp({
      root,
      config: { host: '127.0.0.1', port: 1, env: 'test' } as GlobalConfig,
      log: silentLogger(),
      queues: new QueueClients({ sockPath: (q) => queuePaths(root, q).sock, timeoutMs: 500 }),
      mgr: new MgrClient(rootPaths(root).mgrSock, 500),
      timers: new TimersClient(rootPaths(root).timersSock, 500),
      uploadDir: root,
      cookieSecret: 'test-secret-test-secret-test-secret',
      publicDir: path.join(PROJECT, 'src', 'web', 'public'),
      ansiUpFile: createRequire(import.meta.url).resolve('ansi_up'),
      chartLib: chartLibFiles(),
    });
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
      expect(JSON.parse(gone.body)).toEqual(['fail', `rq-mgr did not answer limit_status (no reply from ${rootPaths(root).mgrSock}: ENOENT: no socket file (is the process running?))`]);
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
    for (const [method, p] of [['GET', '/limits.json'], ['GET', '/'], ['GET', `/q/dn/${d}`], ['POST', `/q/dn/${d}/undepend`]]) {
      const res = await fetch(a.base + p, { method, body: method === 'POST' ? new URLSearchParams({ all: 'true', x_format: 'json' }) : undefined, headers: { authorization: 'Basic ' + Buffer.from('admin:nope').toString('base64') } });
      expect([p, res.status, res.headers.get('www-authenticate')?.startsWith('Basic realm="rq-dl"')]).toEqual([p, 401, true]);
    }
    expect(((await (await fetch(`${a.base}/q/dn/${d}.json`, { headers: good })).json()) as { waiting: unknown }).waiting).toEqual({ reason: 'dependencies', waiting_on: [`dn/${x}`] });
    expect((await fetch(`${a.base}/limits.json`, { headers: good })).status).toBe(200);
    const res = await fetch(`${a.base}/q/dn/${d}/undepend`, { method: 'POST', headers: good, body: new URLSearchParams({ all: 'true', x_format: 'json' }) });
    expect([res.status, await res.json()]).toEqual([200, ['ok', []]]);
    await waitState(a.base, 'dn', d, ['done'], { headers: good });
  });
});
