// HTTP API against a real rq-mgr + web process: status formats, new_message, message actions (admin and server behaviour: web-server.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/rq-root.js';
import { ALL_BYTES, attach, md5 } from './message-fixture.js';
import { type WebRoot, cookiesOf, postForm, send, startWebRoot, stateOf, waitState } from './web-root.js';

let w: WebRoot;
let B: string;

beforeAll(async () => {
  w = await startWebRoot({ queues: { test: {}, other: {} } });
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

  it('unknown queues are 404 (not 500) for every status route: the Not Found page, ["fail", text] on a .json URL', async () => {
    for (const p of ['/q/nope.txt', '/q/nope', '/q/nope/new_message']) {
      const res = await fetch(B + p);
      expect(res.status, p).toBe(404);
      expect(await res.text(), p).toContain('<h2 id="not-found">Not Found</h2>');
    }
    for (const p of ['/q/nope.json', '/q/nope/done.json', '/q/nope/config.json']) {
      const res = await fetch(B + p);
      expect([res.status, await res.json()], p).toEqual([404, ['fail', 'Queue not found: nope']]);
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

  it('takes the run-policy fields (rq-beyond §B1.11) from a JSON mesg and from mesg[...] form fields', async () => {
    const json = await fetch(`${B}/q/test/new_message`, { method: 'POST', body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'test', param1: 'done', max_retries: 2, timeout: 5 }) }) });
    const fromJson = JSON.parse(await json.text())[1].split('/').pop();
    await waitState(B, 'test', fromJson, ['done']);
    expect(await (await fetch(`${B}/q/test/${fromJson}.json`)).json()).toMatchObject({ max_retries: 2, timeout: 5 });
    const form = await postForm(`${B}/q/test/new_message`, { x_format: 'json', 'mesg[dest]': 'test', 'mesg[param1]': 'done', 'mesg[retries]': '4', 'mesg[heartbeat_timeout]': '9.5' });
    const fromForm = JSON.parse(await form.text())[1].split('/').pop();
    await waitState(B, 'test', fromForm, ['done']);
    expect(await (await fetch(`${B}/q/test/${fromForm}.json`)).json()).toMatchObject({ max_retries: 4, heartbeat_timeout: 9.5 });
  });

  it('refuses a bad run-policy field with 400 and the field\'s text; nothing is created', async () => {
    const before = await (await fetch(`${B}/q/test.json`)).text();
    const res = await fetch(`${B}/q/test/new_message`, { method: 'POST', body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'test', param1: 'done', backoff_base: 0 }) }) });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('backoff_base: expected seconds > 0 and <= 86400, received 0');
    expect((await (await fetch(`${B}/q/test.json`)).text()).replace(/"uptime":\d+/, '')).toBe(before.replace(/"uptime":\d+/, ''));
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

  // Values no default or normalisation could produce, so only the request can have put them there.
  const FIELDS = { dest: 'test', param1: 'done', param2: 'two é', param3: '<three>', param4: 'four "4"', src: 'web-api src', due: 1700000000, max_count: 7 };

  /** The message a new_message reply names, as the queue stored it. */
  async function created(res: Response): Promise<Record<string, unknown>> {
    const reply = (await res.json()) as string[];
    expect(reply[0]).toBe('ok');
    return (await (await fetch(`${B}/q/test/${reply[1].split('/').pop()}.json`)).json()) as Record<string, unknown>;
  }

  it('accepts a JSON request body; every field arrives as sent', async () => {
    const res = await fetch(`${B}/q/test/new_message`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ mesg: FIELDS }) });
    expect(await created(res)).toMatchObject(FIELDS);
  });

  it('accepts a multipart form; every field arrives, and a file attached to it keeps its bytes', async () => {
    const fd = new FormData();
    fd.set('mesg', JSON.stringify({ ...FIELDS, _method: 'prep' }));
    const msg = await created(await fetch(`${B}/q/test/new_message`, { method: 'POST', body: fd }));
    expect(msg).toMatchObject({ ...FIELDS, state: 'prep' });
    const id = msg.msg_id as string;
    expect(await attach(B, 'test', id, 'data.bin', ALL_BYTES)).toEqual(['ok', `${md5(ALL_BYTES)}-Attached successfully`]);
    const after = (await (await fetch(`${B}/q/test/${id}.json`)).json()) as { _attachments: Record<string, { md5: string; size: number }> };
    expect(after._attachments['data.bin']).toMatchObject({ md5: md5(ALL_BYTES), size: ALL_BYTES.length });
    const file = await fetch(`${B}/q/test/${id}/attach/data.bin`);
    expect(Buffer.from(await file.arrayBuffer()).equals(ALL_BYTES)).toBe(true);
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

    // An empty back (a form's blank hidden field) is no back: the result page, not a redirect.
    const blank = await postForm(`${B}/q/test/new_message`, { x_format: 'html', back: '', 'mesg[dest]': 'test', 'mesg[param1]': 'done' });
    expect(blank.status).toBe(200);
    expect(await blank.text()).toContain('New Message Result');

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

  it('clone and run_now: flash + 303 on success, the classic texts with the refusal\'s 409 on refusal', async () => {
    const id = await send(B, 'test', { param1: 'done' });
    await waitState(B, 'test', id, ['done']);
    const runDone = await postForm(`${B}/q/test/${id}/run_now`, {});
    expect(runDone.status).toBe(409);
    expect(await runDone.text()).toBe('409 - Couldn\'t run message. ["fail", "msg not in runnable state"].');

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
      expect(cloneQue.status).toBe(409);
      expect(await cloneQue.text()).toBe('409 - Couldn\'t clone message. ["fail", "cannot clone message in que state"].');
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
