// HTML pages against a real rq-mgr: dashboard, queue, message (escaped values), prep, forms with form.json, static assets.
import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { idText } from '../../src/web/views/id-text.js';
import { addQueue } from '../helpers/rq-root.js';
import { type WebRoot, cookiesOf, postForm, send, startWebRoot, waitState } from './web-root.js';

let w: WebRoot;
let B: string;

beforeAll(async () => {
  w = await startWebRoot({
    config: { allow_new_queue: true },
    setup: async (root) => {
      // A queue with a cron schedule that will not fire during the test (1 January, midnight).
      await addQueue(root, 'cron');
      const file = queuePaths(root, 'cron').configFile;
      const cfg = JSON.parse(await fs.readFile(file, 'utf8'));
      await fs.writeFile(file, JSON.stringify({ ...cfg, schedule: [{ cron: '0 0 1 1 *', param1: 'done', param2: '<yearly>' }] }));
    },
  });
  B = w.base;
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

async function page(p: string): Promise<string> {
  const res = await fetch(B + p);
  expect(res.status, p).toBe(200);
  expect(res.headers.get('content-type'), p).toMatch(/^text\/html/);
  return res.text();
}

describe('dashboard', () => {
  it('shows the queue table, supervisor state and timer list', async () => {
    const id = await send(B, 'test', { param1: 'done' });
    await waitState(B, 'test', id, ['done']);
    const html = await page('/');
    expect(html).toContain('<title>RQ</title>');
    expect(html).toContain('QUEUE MGR is OPERATIONAL');
    expect(html).toContain('server: v3.0.0');
    for (const h of ['NAME', 'PREP', 'QUEUE', 'RUN', 'ERR', 'DONE', 'RELAYED', 'PID', 'UPTIME', 'STATUS']) expect(html).toContain(`<th>${h}</th>`);
    expect(html).toMatch(/<td id="q-test-done" data-col="done" class="count good">\d+<\/td>/);
    expect(html).toContain('<td id="q-test-err" data-col="err" class="count zero">0</td>');
    expect(html).toContain('<td id="q-test-status" class="status up">UP</td>');
    expect(html).toContain('id="new-queue-link"');
    // No timers process yet: the list says why.
    expect(html).toMatch(/id="timer-list">(<p class="bad" id="timer-error">Error: |<p class="muted" id="timer-empty">|<table)/);
    expect(html).toContain('<body class="env-test test"');
    expect(html).toContain('src="/js/main.js"');
  });
});

describe('queue page', () => {
  it('lists messages by state with admin buttons, config, search', async () => {
    const done = await send(B, 'test', { param1: 'done', param2: 'needle-123' });
    const err = await send(B, 'test', { param1: 'err' });
    await waitState(B, 'test', done, ['done']);
    await waitState(B, 'test', err, ['err']);
    const html = await page('/q/test');
    expect(html).toContain('<title>RQ :: test</title>');
    for (const id of [
      'btn-pause',
      'btn-down',
      'btn-restart',
      'btn-ack-errs',
      'search-filter',
      'new-message-link',
      'config-text',
      'col-prep',
      'col-que',
      'col-run',
      'col-done',
      'col-err',
      'col-acked',
      'message-table',
      'pager',
    ]) {
      expect(html, id).toContain(`id="${id}"`);
    }
    expect(html).toContain(`<a class="msg-link" href="/q/test/${done}">${done}</a>`);
    expect(html).toContain(`href="/q/test/${err}"`);
    const found = await page('/q/test?filter=needle-123');
    expect(found).toContain('id="search-note"');
    expect(found).toContain(`href="/q/test/${done}"`);
    const none = await page('/q/test?filter=nothing-matches-this');
    expect(none).not.toContain(`href="/q/test/${done}"`);
  });

  it('shows que rows with a run-now button while paused', async () => {
    await w.mgr.cmd('pause_queue', 'test');
    try {
      const id = await send(B, 'test', { param1: 'done' });
      const html = await page('/q/test');
      expect(html).toContain('id="btn-resume"');
      const item = html.slice(html.indexOf(`<tr data-msg-id="${id}" data-state="que">`));
      expect(item).toMatch(/^<tr data-msg-id="[^"]+" data-state="que">/);
      // A small button beside the row's Delete, as every row action is.
      expect(item.slice(0, item.indexOf('</tr>'))).toContain(
        `<form class="inline" method="post" action="/q/test/${id}/run_now"><button type="submit" class="button small">Run now</button></form>`,
      );
    } finally {
      await w.mgr.cmd('resume_queue', 'test');
    }
  });
});

describe('schedules', () => {
  it('lists cron entries with their next run and a Run now button that sends one message', async () => {
    const html = await page('/q/cron');
    expect(html).toContain('id="schedules"');
    expect(html).toContain('<code>0 0 1 1 *</code>');
    expect(html).toContain('param2=&lt;yearly&gt;');
    expect(html).toMatch(/id="schedule-next-0"><time datetime="\d{4}-01-01T/);
    const run = await postForm(`${B}/q/cron/new_message`, {
      x_format: 'html',
      back: '/q/cron',
      'mesg[dest]': 'cron',
      'mesg[src]': 'cron',
      'mesg[param1]': 'done',
      'mesg[param2]': '<yearly>',
    });
    expect(run.status).toBe(303);
    const next = await (await fetch(`${B}/q/cron`, { headers: { cookie: cookiesOf(run) } })).text();
    const id = /Created message http:\/\/[^<]*\/q\/cron\/([\d.]+)/.exec(next)?.[1];
    expect(id).toBeTruthy();
    await waitState(B, 'cron', id!, ['done']);
    const msg = (await (await fetch(`${B}/q/cron/${id}.json`)).json()) as Record<string, unknown>;
    expect(msg).toMatchObject({ src: 'cron', param1: 'done', param2: '<yearly>' });
  });
});

describe('message pages', () => {
  it('escapes every value: a <script> param shows as text', async () => {
    const id = await send(B, 'test', { param1: 'done', param2: '<script>alert(1)</script>', src: '"><img src=x onerror=alert(2)>' });
    await waitState(B, 'test', id, ['done']);
    const html = await page(`/q/test/${id}`);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toContain('<script>alert(1)');
    expect(html).not.toContain('<img src=x');
    // The id wraps only at its dots (a <wbr> after each); its text is the id.
    expect(html).toContain(`<span id="message-id" class="msg-id">${idText(id).value}</span>`);
    expect(html).toContain('<td id="field-status"> done - done sleeping </td>');
    for (const el of ['btn-clone', 'btn-run-now', 'raw-json-link', 'raw-log-link', 'full-tail-link', 'tail-frame', 'message-full'])
      expect(html, el).toContain(`id="${el}"`);
    expect(html).toContain(`id="field-orig_msg_id"> <a href="http://127.0.0.1:${w.port}/q/test/${id}"`);
  });

  it('links cloned_from and shows the prep page with commit/delete and the upload form', async () => {
    const id = await send(B, 'test', { param1: 'done' });
    await waitState(B, 'test', id, ['done']);
    // Paused, the clone stays in que, where the queue page lists it: the one id new there.
    const queIds = async () => {
      const html = await page('/q/test');
      return [...html.matchAll(/data-msg-id="([^"]+)" data-state="que"/g)].map((m) => m[1]);
    };
    await w.mgr.cmd('pause_queue', 'test');
    let cloneId: string;
    try {
      const before = await queIds();
      const clone = await postForm(`${B}/q/test/${id}/clone`, {});
      expect(clone.status).toBe(303);
      const added = (await queIds()).filter((q) => !before.includes(q));
      expect(added).toHaveLength(1);
      cloneId = added[0];
    } finally {
      await w.mgr.cmd('resume_queue', 'test');
    }
    expect(await page(`/q/test/${cloneId}`)).toContain(`id="field-cloned_from"> <a href="/q/test/${id}">${idText(id).value}</a>`);

    const r = await fetch(`${B}/q/test/new_message`, {
      method: 'POST',
      body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'test', _method: 'prep' }) }),
    });
    const prepId = ((await r.json()) as string[])[1].split('/').pop()!;
    const prep = await page(`/q/test/${prepId}`);
    for (const el of ['btn-commit', 'btn-delete', 'upload-form', 'upload-file', 'btn-upload']) expect(prep, el).toContain(`id="${el}"`);
    expect(prep).toContain('enctype="multipart/form-data"');
    expect(prep).toContain('name="filedata"');
    expect(prep).not.toContain('id="tail-frame"');
  });
});

describe('attachment view', () => {
  it('tailview shows an attachment once (no stream)', async () => {
    const r = await fetch(`${B}/q/test/new_message`, {
      method: 'POST',
      body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'test', _method: 'prep' }) }),
    });
    const id = ((await r.json()) as string[])[1].split('/').pop()!;
    const fd = new FormData();
    fd.set('x_format', 'json');
    fd.set('filedata', new Blob(['\u001b[31mred\u001b[0m\n']), 'out.log');
    await fetch(`${B}/q/test/${id}/attach/new`, { method: 'POST', body: fd });
    const html = await page(`/q/test/${id}/tailview/out.log`);
    expect(html).toContain('data-events=""');
    expect(html).toContain(`data-source="/q/test/${id}/attach/out.log"`);
    expect((await fetch(`${B}/q/test/${id}/tailview/missing.log`)).status).toBe(200);
    expect((await fetch(`${B}/q/test/20200101.0000.00.000.1/tailview/out.log`)).status).toBe(404);
  });
});

describe('forms', () => {
  it('new_message form has the classic field ids and honours form.json', async () => {
    const plain = await page('/q/test/new_message');
    for (const f of ['mesg_dest', 'mesg_src', 'mesg_param1', 'mesg_param2', 'mesg_param3', 'mesg_param4', 'mesg_status', 'mesg_post_run_webhook']) {
      expect(plain, f).toContain(`<div class="field" id="${f}_field">`);
    }
    expect(plain).toContain('name="mesg[dest]" value="/q/test"');
    expect(plain).toContain('name="mesg[_method]" id="mesg_method_commit" value="commit" checked');
    expect(plain).toContain('name="x_format" value="html"');

    const formFile = queuePaths(w.root, 'test').formFile;
    await fs.writeFile(formFile, JSON.stringify({ default: 'hidden', mesg_param1: { label: 'queue <name>', help: 'which queue' }, mesg_param2: {} }));
    try {
      const custom = await page('/q/test/new_message');
      expect(custom).toContain('<div class="field" id="mesg_param1_field">');
      expect(custom).toContain('<label for="mesg_param1">queue &lt;name&gt;</label>');
      expect(custom).toContain('which queue');
      expect(custom).toContain('<div class="field" id="mesg_param2_field">');
      for (const f of ['mesg_dest', 'mesg_src', 'mesg_param3', 'mesg_param4', 'mesg_status', 'mesg_post_run_webhook']) {
        expect(custom, f).toContain(`<div class="field" id="${f}_field" style="display: none;">`);
      }
      await fs.writeFile(formFile, '{not json');
      const bad = await fetch(`${B}/q/test/new_message`);
      expect(bad.status).toBe(500);
      expect(await bad.text()).toMatch(/^500 - Bad overrides file/);
    } finally {
      await fs.rm(formFile, { force: true });
    }
  });

  it('new_queue form when allowed', async () => {
    const html = await page('/new_queue');
    for (const f of ['queue_name', 'queue_script', 'queue_num_workers', 'queue_exec_prefix', 'queue_coalesce_params_1', 'queue_blocking_params_4'])
      expect(html, f).toContain(`id="${f}"`);
    expect(html).toContain('value="bash -lc "');
    expect(html).toContain('Anything &gt; 1 means parallelism');
  });
});

describe('static assets', () => {
  it('serves css, scripts, ansi_up as an ES module and the favicon', async () => {
    const css = await fetch(`${B}/css/rq.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    for (const js of ['/js/main.js', '/js/tail.js', '/js/ansi_up.js']) {
      const res = await fetch(B + js);
      expect(res.status, js).toBe(200);
      expect(res.headers.get('content-type'), js).toMatch(/javascript/);
    }
    expect(await (await fetch(`${B}/js/ansi_up.js`)).text()).toContain('export class AnsiUp');
    expect((await fetch(`${B}/favicon.ico`)).status).toBe(200);
  });
});
