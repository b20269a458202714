// HTTP API against a real rq-mgr + web process: status formats, new_message, message actions, admin, flash, health.
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { waitFor } from '../helpers/rq-root.js';
import { type WebRoot, cookiesOf, postForm, send, startWebRoot, stateOf, waitState } from './web-root.js';

let w: WebRoot;
let B: string;

beforeAll(async () => {
  w = await startWebRoot({ config: { allow_new_queue: true }, queues: { test: {}, other: {} } });
  B = w.base;
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

describe('queue lists and status formats (spec §9.5)', () => {
  it('GET /q.json and /q.txt list the queues', async () => {
    const res = await fetch(`${B}/q.json`);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await res.json()) as string[]).sort()).toEqual(['other', 'test']);
    const txt = await fetch(`${B}/q.txt`);
    expect(txt.headers.get('content-type')).toMatch(/^text\/plain/);
    const body = await txt.text();
    expect(body.endsWith('\n\n')).toBe(true);
    expect(body.trim().split('\n').sort()).toEqual(['q/other.txt', 'q/test.txt']);
  });

  it('GET /q/<q>.txt and .json have the exact classic shapes', async () => {
    const txt = await (await fetch(`${B}/q/other.txt`)).text();
    expect(txt).toMatch(/^\nstatus: UP\n\nuptime: \d+\n\n\nprep: 0\nque: 0\nrun: 0\n\ndone: 0\nerr: 0\nrelayed: 0\n\n$/);
    const res = await fetch(`${B}/q/other.json`);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const json = await res.text();
    expect(json).toMatch(/^\{"status":"UP"\n,"uptime":\d+,"prep_size":0,"que_size":0,"run_size":0,"done_size":0,"err_size":0,"relayed_size":0\}\n$/);
    expect(JSON.parse(json).status).toBe('UP');
  });

  it('unknown queues are 404 (not 500) for every status route', async () => {
    for (const p of ['/q/nope.txt', '/q/nope.json', '/q/nope', '/q/nope/done.json', '/q/nope/config.json', '/q/nope/new_message']) {
      const res = await fetch(B + p);
      expect(res.status, p).toBe(404);
      expect(await res.text(), p).toContain('<h2 id="not-found">Not Found</h2>');
    }
  });
});

describe('POST /q/<q>/new_message (spec §9.6)', () => {
  it('creates with x_format json (default) and replies with the queue reply as application/json', async () => {
    const res = await fetch(`${B}/q/test/new_message`, { method: 'POST', body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'test', param1: 'done' }) }) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const text = await res.text();
    expect(text).toMatch(new RegExp(`^\\["ok","http://127\\.0\\.0\\.1:${w.port}/q/test/\\d{8}\\.\\d{4}\\.\\d{2}\\.\\d{3}\\.\\d+"\\]$`));
    const id = JSON.parse(text)[1].split('/').pop();
    await waitState(B, 'test', id, ['done']);
    const msg = (await (await fetch(`${B}/q/test/${id}.json`)).json()) as Record<string, unknown>;
    expect(msg).toMatchObject({ msg_id: id, dest: 'test', param1: 'done', state: 'done', status: 'done - done sleeping', count: 0, max_count: 15 });
    expect(await (await fetch(`${B}/q/test/${id}/state.json`)).json()).toEqual(['done']);
    const done = (await (await fetch(`${B}/q/test/done.json`)).json()) as string[];
    expect(done).toContain(id);
    expect(((await (await fetch(`${B}/q/test/done.json?limit=0`)).json()) as string[]).length).toBe(0);
  });

  it('normalises webhook text and counts; prep leaves the message in prep; single_que returns the queued one', async () => {
    const prepRes = await fetch(`${B}/q/other/new_message`, {
      method: 'POST',
      body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'other', _method: 'prep', max_count: '3', post_run_webhook: 'http://a.example/x http://b.example/y' }) }),
    });
    const prepId = ((await prepRes.json()) as string[])[1].split('/').pop()!;
    const m = (await (await fetch(`${B}/q/other/${prepId}.json`)).json()) as Record<string, unknown>;
    expect(m).toMatchObject({ state: 'prep', max_count: 3, post_run_webhook: ['http://a.example/x', 'http://b.example/y'] });
    expect(m._method).toBeUndefined();

    await w.mgr.cmd('pause_queue', 'other');
    const a = await send(B, 'other', { param1: 'done' });
    const single = await fetch(`${B}/q/other/new_message`, { method: 'POST', body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'other', param1: 'done', _method: 'single_que' }) }) });
    expect(((await single.json()) as string[])[1].endsWith(a)).toBe(true);
    await w.mgr.cmd('resume_queue', 'other');
    await waitState(B, 'other', a, ['done']);
  });

  it('refuses malformed mesg JSON naming the field, and unknown _method with the classic text', async () => {
    const bad = await fetch(`${B}/q/test/new_message`, { method: 'POST', body: new URLSearchParams({ mesg: '{"dest": "test",' }) });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await bad.json()) as string[];
    expect(body[0]).toBe('fail');
    expect(body[1]).toMatch(/^mesg: expected a JSON object/);
    const notObj = await fetch(`${B}/q/test/new_message`, { method: 'POST', body: new URLSearchParams({ mesg: '[1,2]' }) });
    expect(notObj.status).toBe(400);
    expect(((await notObj.json()) as string[])[1]).toMatch(/^mesg: expected a JSON object, received \[1,2\]/);
    const missing = await fetch(`${B}/q/test/new_message`, { method: 'POST', body: new URLSearchParams({ x_format: 'json' }) });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as string[])[1]).toMatch(/^mesg: .*received nothing/);

    const method = await fetch(`${B}/q/test/new_message`, { method: 'POST', body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'test', _method: 'explode' }) }) });
    expect(method.status).toBe(400);
    expect(await method.text()).toBe('400 - Invalid method param');

    const noDest = await fetch(`${B}/q/test/new_message`, { method: 'POST', body: new URLSearchParams({ mesg: JSON.stringify({ param1: 'x' }) }) });
    expect(await noDest.json()).toEqual(['fail', 'input missing required "dest" parameter']);
  });

  it('accepts a JSON request body and a multipart form too', async () => {
    const j = await fetch(`${B}/q/test/new_message`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ mesg: { dest: 'test', param1: 'done' } }) });
    expect(((await j.json()) as string[])[0]).toBe('ok');
    const fd = new FormData();
    fd.set('mesg', JSON.stringify({ dest: 'test', param1: 'done' }));
    const mp = await fetch(`${B}/q/test/new_message`, { method: 'POST', body: fd });
    expect(((await mp.json()) as string[])[0]).toBe('ok');
  });

  it('x_format html: with back ⇒ 303 + flash on the next page; without back ⇒ the result page', async () => {
    const res = await postForm(`${B}/q/test/new_message`, { x_format: 'html', back: '/q/test', 'mesg[dest]': 'test', 'mesg[param1]': 'done', 'mesg[_method]': 'commit' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${w.origin}/q/test`);
    const page = await (await fetch(`${B}/q/test`, { headers: { cookie: cookiesOf(res) } })).text();
    expect(page).toMatch(/<div id="flash-notice"[^>]*>Created message http:\/\/127\.0\.0\.1:\d+\/q\/test\/\d{8}\./);
    // Shown once: the page cleared it.
    const again = await fetch(`${B}/q/test`);
    expect(await again.text()).not.toContain('flash-notice');

    const err = await postForm(`${B}/q/test/new_message`, { x_format: 'html', back: '/q/test', 'mesg[param1]': 'x' });
    const errPage = await (await fetch(`${B}/q/test`, { headers: { cookie: cookiesOf(err) } })).text();
    expect(errPage).toContain('Error creating message: input missing required &quot;dest&quot; parameter');

    const result = await postForm(`${B}/q/test/new_message`, { x_format: 'html', 'mesg[dest]': 'test', 'mesg[param1]': 'done' });
    expect(result.status).toBe(200);
    const html = await result.text();
    expect(html).toContain('New Message Result');
    expect(html).toMatch(/id="result-ok">OK - <a href="\/q\/test\/\d{8}\./);

    // back pointing at another site is not followed (no open redirect).
    const evil = await postForm(`${B}/q/test/new_message`, { x_format: 'html', back: 'https://evil.example/x', 'mesg[dest]': 'test', 'mesg[param1]': 'done' });
    expect(evil.headers.get('location')).toBe(`${w.origin}/q/test`);
  });

  it('a DOWN queue answers 503 with the classic text; its status formats show DOWN', async () => {
    await w.mgr.cmd('down_queue', 'other');
    try {
      await waitFor(async () => (await (await fetch(`${B}/q/other.txt`)).text()) === '\nstatus: DOWN\n\n', 'DOWN status text');
      expect(await (await fetch(`${B}/q/other.json`)).text()).toBe('{"status":"DOWN"\n}\n');
      const res = await fetch(`${B}/q/other/new_message`, { method: 'POST', body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'other' }) }) });
      expect(res.status).toBe(503);
      expect(await res.text()).toBe('503 - Service Unavailable - Operationally Down');
      const page = await (await fetch(`${B}/q/other`)).text();
      expect(page).toContain('Queue is HARD DOWN');
    } finally {
      await w.mgr.cmd('up_queue', 'other');
    }
  });
});

describe('message actions (spec §9.3)', () => {
  it('POST /q/<q>/<id> delete/commit/destroy in json and html modes', async () => {
    const prep = async () => {
      const r = await fetch(`${B}/q/test/new_message`, { method: 'POST', body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'test', param1: 'done', _method: 'prep' }) }) });
      return ((await r.json()) as string[])[1].split('/').pop()!;
    };
    const a = await prep();
    const commit = await postForm(`${B}/q/test/${a}`, { _method: 'commit', x_format: 'json' });
    expect(await commit.json()).toEqual(['ok', 'msg commited']);
    expect(await (await postForm(`${B}/q/test/${a}`, { _method: 'commit', x_format: 'json' })).json()).toEqual(['fail', 'cannot find message']);

    const b = await prep();
    const del = await postForm(`${B}/q/test/${b}`, { _method: 'delete' });
    expect(del.status).toBe(303);
    expect(del.headers.get('location')).toBe(`${w.origin}/q/test`);
    expect(await (await fetch(`${B}/q/test`, { headers: { cookie: cookiesOf(del) } })).text()).toContain('Message deleted successfully');
    expect(await stateOf(B, 'test', b)).toBe('http 404');

    const c = await prep();
    const hc = await postForm(`${B}/q/test/${c}`, { _method: 'commit' });
    expect(hc.headers.get('location')).toBe(`${w.origin}/q/test/${c}`);
    expect(await (await fetch(`${B}/q/test/${c}`, { headers: { cookie: cookiesOf(hc) } })).text()).toContain('Message committed successfully');

    const slow = await send(B, 'test', { param1: 'forever' });
    await waitState(B, 'test', slow, ['run']);
    const destroy = await postForm(`${B}/q/test/${slow}`, { _method: 'destroy' });
    expect(destroy.status).toBe(303);
    expect(await (await fetch(`${B}/q/test`, { headers: { cookie: cookiesOf(destroy) } })).text()).toContain('Message destroyed successfully');
    await waitState(B, 'test', slow, ['err']);

    const bad = await postForm(`${B}/q/test/${slow}`, { _method: 'explode' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toBe('400 - Invalid method param');
    expect((await postForm(`${B}/q/test/${slow}`, {})).status).toBe(400);

    const gone = await postForm(`${B}/q/test/20200101.0000.00.000.1`, { _method: 'delete', x_format: 'json' });
    expect(await gone.json()).toEqual(['fail', 'msg not found']);
    const goneHtml = await postForm(`${B}/q/test/20200101.0000.00.000.1`, { _method: 'delete' });
    expect(goneHtml.headers.get('location')).toBe(`${w.origin}/q/test/20200101.0000.00.000.1`);
    const goneFlash = await fetch(`${B}/q/test/20200101.0000.00.000.1`, { headers: { cookie: cookiesOf(goneHtml) } });
    // The 404 page shows the flash too.
    expect(goneFlash.status).toBe(404);
    expect(await goneFlash.text()).toContain('Delete got [&quot;fail&quot;, &quot;msg not found&quot;]');
  });

  it('clone and run_now: flash + 303 on success, classic 500 texts on refusal', async () => {
    const id = await send(B, 'test', { param1: 'done' });
    await waitState(B, 'test', id, ['done']);
    const runDone = await postForm(`${B}/q/test/${id}/run_now`, {});
    expect(runDone.status).toBe(500);
    expect(await runDone.text()).toBe('500 - Couldn\'t run message. ["fail", "msg not in runnable state"].');

    const clone = await postForm(`${B}/q/test/${id}/clone`, {});
    expect(clone.status).toBe(303);
    expect(clone.headers.get('location')).toBe(`${w.origin}/q/test`);
    expect(await (await fetch(`${B}/q/test`, { headers: { cookie: cookiesOf(clone) } })).text()).toContain('Message cloned successfully');

    await w.mgr.cmd('pause_queue', 'test');
    try {
      const q = await send(B, 'test', { param1: 'done' });
      const run = await postForm(`${B}/q/test/${q}/run_now`, {});
      expect(run.status).toBe(303);
      expect(run.headers.get('location')).toBe(`${w.origin}/q/test/${q}`);
      expect(await (await fetch(`${B}/q/test/${q}`, { headers: { cookie: cookiesOf(run) } })).text()).toContain('Message in run successfully');
      const cloneQue = await postForm(`${B}/q/test/${q}/clone`, {});
      expect(cloneQue.status).toBe(500);
      expect(await cloneQue.text()).toBe('500 - Couldn\'t clone message. ["fail", "cannot clone message in que state"].');
    } finally {
      await w.mgr.cmd('resume_queue', 'test');
    }
  });

  it('unknown message ids are 404 for the message routes', async () => {
    for (const p of ['/q/test/20200101.0000.00.000.1', '/q/test/20200101.0000.00.000.1.json', '/q/test/20200101.0000.00.000.1/state.json', '/q/test/20200101.0000.00.000.1/log/stdio.log']) {
      expect((await fetch(B + p)).status, p).toBe(404);
    }
  });
});

describe('queue administration (spec §5.3)', () => {
  it('adminoper pause/resume/down/up with flash and back; bad params', async () => {
    const pause = await postForm(`${B}/q/other/adminoper`, { pause: '1', back: '/q/other' });
    expect(pause.status).toBe(303);
    expect(pause.headers.get('location')).toBe(`${w.origin}/q/other`);
    expect(await (await fetch(`${B}/q/other`, { headers: { cookie: cookiesOf(pause) } })).text()).toContain('Successfully paused queue other');
    expect((await (await fetch(`${B}/q/other.json`)).json()).status).toBe('PAUSE');
    await postForm(`${B}/q/other/adminoper`, { resume: '1', back: '/' });
    expect((await (await fetch(`${B}/q/other.json`)).json()).status).toBe('UP');
    const down = await postForm(`${B}/q/other/adminoper`, { down: '1', back: '/' });
    expect(down.headers.get('location')).toBe(`${w.origin}/`);
    expect(await (await fetch(`${B}/`, { headers: { cookie: cookiesOf(down) } })).text()).toContain('Successfully downd queue other');
    expect((await (await fetch(`${B}/q/other.json`)).json()).status).toBe('DOWN');
    await postForm(`${B}/q/other/adminoper`, { up: '1' });
    expect((await (await fetch(`${B}/q/other.json`)).json()).status).toBe('UP');
    expect((await postForm(`${B}/q/other/adminoper`, { pause: '1', resume: '1', down: '1', up: '1' })).status).toBe(400);
    expect((await postForm(`${B}/q/other/adminoper`, {})).status).toBe(400);
    expect((await postForm(`${B}/q/nope/adminoper`, { pause: '1' })).status).toBe(404);
  });

  it('ack_errs acknowledges errors; restart restarts the queue process', async () => {
    const id = await send(B, 'other', { param1: 'err' });
    await waitState(B, 'other', id, ['err']);
    const ack = await postForm(`${B}/q/other/ack_errs`, { back: '/q/other' });
    expect(ack.status).toBe(303);
    expect(await (await fetch(`${B}/q/other`, { headers: { cookie: cookiesOf(ack) } })).text()).toContain('Successfully acknowledged errors');
    expect(await stateOf(B, 'other', `.${id}`)).toBe('err');
    const page = await (await fetch(`${B}/q/other`)).text();
    expect(page).toContain(`href="/q/other/.${id}"`);

    const pidBefore = (await fs.readFile(queuePaths(w.root, 'other').pidFile, 'utf8')).trim();
    const restart = await postForm(`${B}/q/other/restart`, { back: '/q/other' });
    expect(restart.status).toBe(303);
    expect(await (await fetch(`${B}/q/other`, { headers: { cookie: cookiesOf(restart) } })).text()).toContain('Successfully restarted queue other');
    await waitFor(async () => (await fs.readFile(queuePaths(w.root, 'other').pidFile, 'utf8')).trim() !== pidBefore && (await fetch(`${B}/q/other.json`)).status === 200, 'new queue pid');
  });

  it('config and config.json', async () => {
    const live = await fetch(`${B}/q/test/config`);
    expect(live.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await live.json()).toMatchObject({ name: 'test', num_workers: 1 });
    const file = await fetch(`${B}/q/test/config.json`);
    expect(file.headers.get('content-type')).toMatch(/^application\/json/);
    expect(JSON.parse(await file.text()).name).toBe('test');
  });

  it('new_queue creates a queue (flash with the supervisor reply); a bad name shows its flash on the 404 page; delete_queue', async () => {
    const res = await postForm(`${B}/new_queue`, { 'queue[name]': 'made', 'queue[script]': (await fs.readFile(queuePaths(w.root, 'test').configFile, 'utf8')).match(/"script":"([^"]+)"/)![1], 'queue[num_workers]': '1', 'queue[exec_prefix]': '', 'queue[coalesce_params][]': '1' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${w.origin}/q/made`);
    await waitFor(async () => (await fetch(`${B}/q/made.json`)).status === 200, 'made queue up');
    const page = await (await fetch(`${B}/q/made`, { headers: { cookie: cookiesOf(res) } })).text();
    expect(page).toContain('We got <code>{&quot;queue&quot;=&gt;{&quot;name&quot;=&gt;&quot;made&quot;');
    expect(page).toContain('queue created - awesome');
    expect(((await (await fetch(`${B}/q.json`)).json()) as string[]).includes('made')).toBe(true);

    const bad = await postForm(`${B}/new_queue`, { 'queue[name]': 'bad name', 'queue[script]': '/bin/true' });
    expect(bad.headers.get('location')).toBe(`${w.origin}/q/bad%20name`);
    const nf = await fetch(bad.headers.get('location')!, { headers: { cookie: cookiesOf(bad) } });
    expect(nf.status).toBe(404);
    const nfText = await nf.text();
    expect(nfText).toContain('<h2 id="not-found">Not Found</h2>');
    expect(nfText).toContain('queue name has invalid characters');

    const del = await postForm(`${B}/delete_queue`, { queue_name: 'made' });
    expect(del.status).toBe(303);
    expect(del.headers.get('location')).toBe(`${w.origin}/`);
    expect(await (await fetch(`${B}/`, { headers: { cookie: cookiesOf(del) } })).text()).toContain('started deleting queue');
    await waitFor(async () => (await fetch(`${B}/q/made.json`)).status === 404, 'made deleted');
  });
});

describe('new_queue_link and rq_router indirection', () => {
  it('POST /new_queue_link creates a queue whose config is the given file; an unreadable file is 404', async () => {
    const script = JSON.parse(await fs.readFile(queuePaths(w.root, 'test').configFile, 'utf8')).script as string;
    const file = path.join(w.root, 'linked.json');
    await fs.writeFile(file, JSON.stringify({ name: 'linked', script, num_workers: 1 }));
    const res = await postForm(`${B}/new_queue_link`, { 'queue[json_path]': file });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${w.origin}/q/linked`);
    await waitFor(async () => (await fetch(`${B}/q/linked.json`)).status === 200, 'linked queue up');
    expect(await (await fetch(`${B}/q/linked`, { headers: { cookie: cookiesOf(res) } })).text()).toContain('queue created - awesome');
    expect((await fs.lstat(queuePaths(w.root, 'linked').configFile)).isSymbolicLink()).toBe(true);
    await postForm(`${B}/delete_queue`, { queue_name: 'linked' });

    const missing = await postForm(`${B}/new_queue_link`, { 'queue[json_path]': path.join(w.root, 'nope.json') });
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain(`Couldn&#39;t parse json file (${path.join(w.root, 'nope.json')}).`);
  });

  it('routes message-level requests to rq_router while its rules file exists (spec §9.2)', async () => {
    const id = await send(B, 'test', { param1: 'done' });
    await waitState(B, 'test', id, ['done']);
    const rules = path.join(w.root, 'config', 'rq_router_rules.rb');
    await fs.writeFile(rules, '# rules');
    try {
      // No rq_router queue here: the routed requests find no queue.
      expect((await fetch(`${B}/q/test/${id}.json`)).status).toBe(404);
      expect((await fetch(`${B}/q/test/${id}/state.json`)).status).toBe(404);
      // Not routed: the status formats and the queue page.
      expect((await fetch(`${B}/q/test.json`)).status).toBe(200);
    } finally {
      await fs.rm(rules);
    }
    expect((await fetch(`${B}/q/test/${id}.json`)).status).toBe(200);
  });
});

describe('server behaviour (spec §9.1)', () => {
  it('refuses a cross-origin browser POST (403) and serves one without Origin', async () => {
    const id = await send(B, 'test', { param1: 'done' });
    await waitState(B, 'test', id, ['done']);
    const evil = await postForm(`${B}/q/test/${id}/clone`, {}, { origin: 'https://evil.example' });
    expect(evil.status).toBe(403);
    const same = await postForm(`${B}/q/test/${id}/clone`, {}, { origin: w.origin });
    expect(same.status).toBe(303);
  });

  it('HTTP/1.0 without Host and HTTP/1.1 keep-alive both work', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const s = net.connect(w.port, '127.0.0.1', () => s.write('GET /q.json HTTP/1.0\r\n\r\n'));
      let buf = '';
      s.on('data', (d) => (buf += d));
      s.on('end', () => resolve(buf));
      s.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.[01] 200/);
    expect(raw).toContain('application/json');
    expect(raw).toMatch(/\r\n\r\n\[("other"|"test"),("other"|"test")\]$/);

    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const get = (p: string) =>
      new Promise<{ port: number; status: number }>((resolve, reject) => {
        const req = http.get(`${B}${p}`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ port: req.socket!.localPort!, status: res.statusCode! }));
        });
        req.on('error', reject);
      });
    const one = await get('/q.json');
    const two = await get('/q/test.json');
    expect([one.status, two.status]).toEqual([200, 200]);
    expect(two.port).toBe(one.port);
    agent.destroy();
  });

  it('honours Expect: 100-continue', async () => {
    const body = new URLSearchParams({ mesg: JSON.stringify({ dest: 'test', param1: 'done' }) }).toString();
    const out = await new Promise<string>((resolve, reject) => {
      const s = net.connect(w.port, '127.0.0.1', () => {
        s.write(`POST /q/test/new_message HTTP/1.1\r\nHost: 127.0.0.1:${w.port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`);
      });
      let buf = '';
      let sent = false;
      s.on('data', (d) => {
        buf += d;
        if (!sent && buf.includes('100 Continue')) {
          sent = true;
          s.write(body);
        }
      });
      s.on('end', () => resolve(buf));
      s.on('error', reject);
    });
    expect(out).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK/);
    expect(out).toMatch(/\["ok","http:/);
  });

  it('GET /healthz is 200 while all answer and 503 naming a dead queue; /dashboard.json carries counts', async () => {
    const ok = await fetch(`${B}/healthz`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ status: 'ok', checked: expect.arrayContaining(['rq-mgr', 'queue test', 'queue other']) });
    const dash = (await (await fetch(`${B}/dashboard.json`)).json()) as { mgr: { up: boolean }; queues: { name: string; counts: unknown }[] };
    expect(dash.mgr.up).toBe(true);
    expect(dash.queues.find((q) => q.name === 'test')?.counts).toMatchObject({ prep: expect.any(Number), done: expect.any(Number) });

    // A queue whose process cannot start (unreadable config) is listed by rq-mgr but answers nothing.
    const dir = queuePaths(w.root, 'broken').dir;
    await fs.mkdir(dir);
    await fs.writeFile(path.join(dir, 'config.json'), 'not json');
    process.kill(w.mgr.child.pid!, 'SIGHUP');
    try {
      await waitFor(async () => (await fetch(`${B}/healthz`)).status === 503, 'healthz 503');
      const bad = (await (await fetch(`${B}/healthz`)).json()) as { status: string; failing: { name: string; error: string }[] };
      expect(bad.status).toBe('fail');
      expect(bad.failing.map((f) => f.name)).toEqual(['queue broken']);
      const page = await (await fetch(`${B}/`)).text();
      expect(page).toMatch(/id="q-broken-status" class="status down">DOWN /);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
      process.kill(w.mgr.child.pid!, 'SIGHUP');
      await waitFor(async () => (await fetch(`${B}/healthz`)).status === 200, 'healthz 200 again');
    }
  });

  it('unknown routes get the Not Found page', async () => {
    const res = await fetch(`${B}/no/such/thing`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toContain('<h2 id="not-found">Not Found</h2>');
    expect((await fetch(`${B}/q/test/adminoper`)).status).toBe(404);
  });
});

