// POST /q/<q>/new_message against a real rq-mgr + web process (spec §9.6): the forms and bodies it takes, what it refuses, its answers in json and html.
import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/rq-root.js';
import { ALL_BYTES, attach, md5 } from './message-fixture.js';
import { apiRoot } from './web-api-harness.js';
import { cookiesOf, postForm, send, waitState } from './web-root.js';

const s = apiRoot();

describe('POST /q/<q>/new_message (spec §9.6)', () => {
  it('creates with x_format json (default) and replies with the queue reply as application/json', async () => {
    const res = await fetch(`${s.B}/q/test/new_message`, {
      method: 'POST',
      body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'test', param1: 'done' }) }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const text = await res.text();
    expect(text).toMatch(new RegExp(`^\\["ok","http://127\\.0\\.0\\.1:${s.w.port}/q/test/\\d{8}\\.\\d{4}\\.\\d{2}\\.\\d{3}\\.\\d+"\\]$`));
    const id = JSON.parse(text)[1].split('/').pop();
    await waitState(s.B, 'test', id, ['done']);
    const msg = (await (await fetch(`${s.B}/q/test/${id}.json`)).json()) as Record<string, unknown>;
    expect(msg).toMatchObject({ msg_id: id, dest: 'test', param1: 'done', state: 'done', status: 'done - done sleeping', count: 0, max_count: 15 });
    expect(await (await fetch(`${s.B}/q/test/${id}/state.json`)).json()).toEqual(['done']);
    const done = (await (await fetch(`${s.B}/q/test/done.json`)).json()) as string[];
    expect(done).toContain(id);
    expect(((await (await fetch(`${s.B}/q/test/done.json?limit=0`)).json()) as string[]).length).toBe(0);
  });

  it('takes the run-policy fields (rq-beyond §B1.11) from a JSON mesg and from mesg[...] form fields', async () => {
    const json = await fetch(`${s.B}/q/test/new_message`, {
      method: 'POST',
      body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'test', param1: 'done', max_retries: 2, timeout: 5 }) }),
    });
    const fromJson = JSON.parse(await json.text())[1]
      .split('/')
      .pop();
    await waitState(s.B, 'test', fromJson, ['done']);
    expect(await (await fetch(`${s.B}/q/test/${fromJson}.json`)).json()).toMatchObject({ max_retries: 2, timeout: 5 });
    const form = await postForm(`${s.B}/q/test/new_message`, {
      x_format: 'json',
      'mesg[dest]': 'test',
      'mesg[param1]': 'done',
      'mesg[retries]': '4',
      'mesg[heartbeat_timeout]': '9.5',
    });
    const fromForm = JSON.parse(await form.text())[1]
      .split('/')
      .pop();
    await waitState(s.B, 'test', fromForm, ['done']);
    expect(await (await fetch(`${s.B}/q/test/${fromForm}.json`)).json()).toMatchObject({ max_retries: 4, heartbeat_timeout: 9.5 });
  });

  it("refuses a bad run-policy field with 400 and the field's text; nothing is created", async () => {
    const before = await (await fetch(`${s.B}/q/test.json`)).text();
    const res = await fetch(`${s.B}/q/test/new_message`, {
      method: 'POST',
      body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'test', param1: 'done', backoff_base: 0 }) }),
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('backoff_base: expected seconds > 0 and <= 86400, received 0');
    expect((await (await fetch(`${s.B}/q/test.json`)).text()).replace(/"uptime":\d+/, '')).toBe(before.replace(/"uptime":\d+/, ''));
  });

  it('normalises webhook text and counts; prep leaves the message in prep; single_que returns the queued one', async () => {
    const prepRes = await fetch(`${s.B}/q/other/new_message`, {
      method: 'POST',
      body: new URLSearchParams({
        mesg: JSON.stringify({ dest: 'other', _method: 'prep', max_count: '3', post_run_webhook: 'http://a.example/x http://b.example/y' }),
      }),
    });
    const prepId = ((await prepRes.json()) as string[])[1].split('/').pop()!;
    const m = (await (await fetch(`${s.B}/q/other/${prepId}.json`)).json()) as Record<string, unknown>;
    expect(m).toMatchObject({ state: 'prep', max_count: 3, post_run_webhook: ['http://a.example/x', 'http://b.example/y'] });
    expect(m._method).toBeUndefined();

    await s.w.mgr.cmd('pause_queue', 'other');
    const a = await send(s.B, 'other', { param1: 'done' });
    const single = await fetch(`${s.B}/q/other/new_message`, {
      method: 'POST',
      body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'other', param1: 'done', _method: 'single_que' }) }),
    });
    expect(((await single.json()) as string[])[1].endsWith(a)).toBe(true);
    await s.w.mgr.cmd('resume_queue', 'other');
    await waitState(s.B, 'other', a, ['done']);
  });

  it('refuses malformed mesg JSON naming the field, and unknown _method with the classic text', async () => {
    const bad = await fetch(`${s.B}/q/test/new_message`, { method: 'POST', body: new URLSearchParams({ mesg: '{"dest": "test",' }) });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await bad.json()) as string[];
    expect(body[0]).toBe('fail');
    expect(body[1]).toMatch(/^mesg: expected a JSON object/);
    const notObj = await fetch(`${s.B}/q/test/new_message`, { method: 'POST', body: new URLSearchParams({ mesg: '[1,2]' }) });
    expect(notObj.status).toBe(400);
    expect(((await notObj.json()) as string[])[1]).toMatch(/^mesg: expected a JSON object, received \[1,2\]/);
    const missing = await fetch(`${s.B}/q/test/new_message`, { method: 'POST', body: new URLSearchParams({ x_format: 'json' }) });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as string[])[1]).toMatch(/^mesg: .*received nothing/);

    const method = await fetch(`${s.B}/q/test/new_message`, {
      method: 'POST',
      body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'test', _method: 'explode' }) }),
    });
    expect(method.status).toBe(400);
    expect(await method.text()).toBe('400 - Invalid method param');

    const noDest = await fetch(`${s.B}/q/test/new_message`, { method: 'POST', body: new URLSearchParams({ mesg: JSON.stringify({ param1: 'x' }) }) });
    expect(await noDest.json()).toEqual(['fail', 'input missing required "dest" parameter']);
  });

  // Values no default or normalisation could produce, so only the request can have put them there.
  const FIELDS = { dest: 'test', param1: 'done', param2: 'two é', param3: '<three>', param4: 'four "4"', src: 'web-api src', due: 1700000000, max_count: 7 };

  /** The message a new_message reply names, as the queue stored it. */
  async function created(res: Response): Promise<Record<string, unknown>> {
    const reply = (await res.json()) as string[];
    expect(reply[0]).toBe('ok');
    return (await (await fetch(`${s.B}/q/test/${reply[1].split('/').pop()}.json`)).json()) as Record<string, unknown>;
  }

  it('accepts a JSON request body; every field arrives as sent', async () => {
    const res = await fetch(`${s.B}/q/test/new_message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mesg: FIELDS }),
    });
    expect(await created(res)).toMatchObject(FIELDS);
  });

  it('accepts a multipart form; every field arrives, and a file attached to it keeps its bytes', async () => {
    const fd = new FormData();
    fd.set('mesg', JSON.stringify({ ...FIELDS, _method: 'prep' }));
    const msg = await created(await fetch(`${s.B}/q/test/new_message`, { method: 'POST', body: fd }));
    expect(msg).toMatchObject({ ...FIELDS, state: 'prep' });
    const id = msg.msg_id as string;
    expect(await attach(s.B, 'test', id, 'data.bin', ALL_BYTES)).toEqual(['ok', `${md5(ALL_BYTES)}-Attached successfully`]);
    const after = (await (await fetch(`${s.B}/q/test/${id}.json`)).json()) as { _attachments: Record<string, { md5: string; size: number }> };
    expect(after._attachments['data.bin']).toMatchObject({ md5: md5(ALL_BYTES), size: ALL_BYTES.length });
    const file = await fetch(`${s.B}/q/test/${id}/attach/data.bin`);
    expect(Buffer.from(await file.arrayBuffer()).equals(ALL_BYTES)).toBe(true);
  });

  it('x_format html: with back ⇒ 303 + flash on the next page; without back ⇒ the result page', async () => {
    const res = await postForm(`${s.B}/q/test/new_message`, {
      x_format: 'html',
      back: '/q/test',
      'mesg[dest]': 'test',
      'mesg[param1]': 'done',
      'mesg[_method]': 'commit',
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${s.w.origin}/q/test`);
    const page = await (await fetch(`${s.B}/q/test`, { headers: { cookie: cookiesOf(res) } })).text();
    expect(page).toMatch(/<div id="flash-notice"[^>]*>Created message http:\/\/127\.0\.0\.1:\d+\/q\/test\/\d{8}\./);
    // Shown once: the page cleared it.
    const again = await fetch(`${s.B}/q/test`);
    expect(await again.text()).not.toContain('flash-notice');

    const err = await postForm(`${s.B}/q/test/new_message`, { x_format: 'html', back: '/q/test', 'mesg[param1]': 'x' });
    const errPage = await (await fetch(`${s.B}/q/test`, { headers: { cookie: cookiesOf(err) } })).text();
    expect(errPage).toContain('Error creating message: input missing required &quot;dest&quot; parameter');

    // An empty back (a form's blank hidden field) is no back: the result page, not a redirect.
    const blank = await postForm(`${s.B}/q/test/new_message`, { x_format: 'html', back: '', 'mesg[dest]': 'test', 'mesg[param1]': 'done' });
    expect(blank.status).toBe(200);
    expect(await blank.text()).toContain('New Message Result');

    const result = await postForm(`${s.B}/q/test/new_message`, { x_format: 'html', 'mesg[dest]': 'test', 'mesg[param1]': 'done' });
    expect(result.status).toBe(200);
    const html = await result.text();
    expect(html).toContain('New Message Result');
    expect(html).toMatch(/id="result-ok">OK - <a href="\/q\/test\/\d{8}\./);

    // back pointing at another site is not followed (no open redirect).
    const evil = await postForm(`${s.B}/q/test/new_message`, {
      x_format: 'html',
      back: 'https://evil.example/x',
      'mesg[dest]': 'test',
      'mesg[param1]': 'done',
    });
    expect(evil.headers.get('location')).toBe(`${s.w.origin}/q/test`);
  });

  it('a DOWN queue answers 503 with the classic text; its status formats show DOWN', async () => {
    await s.w.mgr.cmd('down_queue', 'other');
    try {
      await waitFor(async () => (await (await fetch(`${s.B}/q/other.txt`)).text()) === '\nstatus: DOWN\n\n', 'DOWN status text');
      expect(await (await fetch(`${s.B}/q/other.json`)).text()).toBe('{"status":"DOWN"\n}\n');
      const res = await fetch(`${s.B}/q/other/new_message`, { method: 'POST', body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'other' }) }) });
      expect(res.status).toBe(503);
      expect(await res.text()).toBe('503 - Service Unavailable - Operationally Down');
      const page = await (await fetch(`${s.B}/q/other`)).text();
      expect(page).toContain('Queue is HARD DOWN');
    } finally {
      await s.w.mgr.cmd('up_queue', 'other');
    }
  });
});
