// HTTP API against a real rq-mgr + web process: status formats and message actions (new_message: web-new-message.test.ts; admin and server behaviour: web-server.test.ts).
import { describe, expect, it } from 'vitest';
import { apiRoot } from './web-api-harness.js';
import { cookiesOf, postForm, send, stateOf, waitState } from './web-root.js';

const s = apiRoot();

describe('queue lists and status formats (spec §9.5)', () => {
  it('GET /q.json and /q.txt list the queues', async () => {
    const res = await fetch(`${s.B}/q.json`);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await res.json()) as string[]).sort()).toEqual(['other', 'test']);
    const txt = await fetch(`${s.B}/q.txt`);
    expect(txt.headers.get('content-type')).toMatch(/^text\/plain/);
    const body = await txt.text();
    expect(body.endsWith('\n\n')).toBe(true);
    expect(body.trim().split('\n').sort()).toEqual(['q/other.txt', 'q/test.txt']);
  });

  it('GET /q/<q>.txt and .json have the exact classic shapes', async () => {
    const txt = await (await fetch(`${s.B}/q/other.txt`)).text();
    expect(txt).toMatch(/^\nstatus: UP\n\nuptime: \d+\n\n\nprep: 0\nque: 0\nrun: 0\n\ndone: 0\nerr: 0\nrelayed: 0\n\n$/);
    const res = await fetch(`${s.B}/q/other.json`);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const json = await res.text();
    expect(json).toMatch(/^\{"status":"UP"\n,"uptime":\d+,"prep_size":0,"que_size":0,"run_size":0,"done_size":0,"err_size":0,"relayed_size":0\}\n$/);
    expect(JSON.parse(json).status).toBe('UP');
  });

  it('unknown queues are 404 (not 500) for every status route: the Not Found page, ["fail", text] on a .json URL', async () => {
    for (const p of ['/q/nope.txt', '/q/nope', '/q/nope/new_message']) {
      const res = await fetch(s.B + p);
      expect(res.status, p).toBe(404);
      expect(await res.text(), p).toContain('<h2 id="not-found">Not Found</h2>');
    }
    for (const p of ['/q/nope.json', '/q/nope/done.json', '/q/nope/config.json']) {
      const res = await fetch(s.B + p);
      expect([res.status, await res.json()], p).toEqual([404, ['fail', 'Queue not found: nope']]);
    }
  });
});

describe('message actions (spec §9.3)', () => {
  it('POST /q/<q>/<id> delete/commit/destroy in json and html modes', async () => {
    const prep = async () => {
      const r = await fetch(`${s.B}/q/test/new_message`, {
        method: 'POST',
        body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'test', param1: 'done', _method: 'prep' }) }),
      });
      return ((await r.json()) as string[])[1].split('/').pop()!;
    };
    const a = await prep();
    const commit = await postForm(`${s.B}/q/test/${a}`, { _method: 'commit', x_format: 'json' });
    expect(await commit.json()).toEqual(['ok', 'msg commited']);
    expect(await (await postForm(`${s.B}/q/test/${a}`, { _method: 'commit', x_format: 'json' })).json()).toEqual(['fail', 'cannot find message']);

    const b = await prep();
    const del = await postForm(`${s.B}/q/test/${b}`, { _method: 'delete' });
    expect(del.status).toBe(303);
    expect(del.headers.get('location')).toBe(`${s.w.origin}/q/test`);
    expect(await (await fetch(`${s.B}/q/test`, { headers: { cookie: cookiesOf(del) } })).text()).toContain('Message deleted successfully');
    expect(await stateOf(s.B, 'test', b)).toBe('http 404');

    const c = await prep();
    const hc = await postForm(`${s.B}/q/test/${c}`, { _method: 'commit' });
    expect(hc.headers.get('location')).toBe(`${s.w.origin}/q/test/${c}`);
    expect(await (await fetch(`${s.B}/q/test/${c}`, { headers: { cookie: cookiesOf(hc) } })).text()).toContain('Message committed successfully');

    const slow = await send(s.B, 'test', { param1: 'forever' });
    await waitState(s.B, 'test', slow, ['run']);
    const destroy = await postForm(`${s.B}/q/test/${slow}`, { _method: 'destroy' });
    expect(destroy.status).toBe(303);
    expect(await (await fetch(`${s.B}/q/test`, { headers: { cookie: cookiesOf(destroy) } })).text()).toContain('Message destroyed successfully');
    await waitState(s.B, 'test', slow, ['err']);

    const bad = await postForm(`${s.B}/q/test/${slow}`, { _method: 'explode' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toBe('400 - Invalid method param');
    expect((await postForm(`${s.B}/q/test/${slow}`, {})).status).toBe(400);

    const gone = await postForm(`${s.B}/q/test/20200101.0000.00.000.1`, { _method: 'delete', x_format: 'json' });
    expect(await gone.json()).toEqual(['fail', 'msg not found']);
    const goneHtml = await postForm(`${s.B}/q/test/20200101.0000.00.000.1`, { _method: 'delete' });
    expect(goneHtml.headers.get('location')).toBe(`${s.w.origin}/q/test/20200101.0000.00.000.1`);
    const goneFlash = await fetch(`${s.B}/q/test/20200101.0000.00.000.1`, { headers: { cookie: cookiesOf(goneHtml) } });
    // The 404 page shows the flash too.
    expect(goneFlash.status).toBe(404);
    expect(await goneFlash.text()).toContain('Delete got [&quot;fail&quot;, &quot;msg not found&quot;]');
  });

  it("clone and run_now: flash + 303 on success, the classic texts with the refusal's 409 on refusal", async () => {
    const id = await send(s.B, 'test', { param1: 'done' });
    await waitState(s.B, 'test', id, ['done']);
    const runDone = await postForm(`${s.B}/q/test/${id}/run_now`, {});
    expect(runDone.status).toBe(409);
    expect(await runDone.text()).toBe('409 - Couldn\'t run message. ["fail", "msg not in runnable state"].');

    const clone = await postForm(`${s.B}/q/test/${id}/clone`, {});
    expect(clone.status).toBe(303);
    expect(clone.headers.get('location')).toBe(`${s.w.origin}/q/test`);
    expect(await (await fetch(`${s.B}/q/test`, { headers: { cookie: cookiesOf(clone) } })).text()).toContain('Message cloned successfully');

    await s.w.mgr.cmd('pause_queue', 'test');
    try {
      const q = await send(s.B, 'test', { param1: 'done' });
      const run = await postForm(`${s.B}/q/test/${q}/run_now`, {});
      expect(run.status).toBe(303);
      expect(run.headers.get('location')).toBe(`${s.w.origin}/q/test/${q}`);
      expect(await (await fetch(`${s.B}/q/test/${q}`, { headers: { cookie: cookiesOf(run) } })).text()).toContain('Message in run successfully');
      const cloneQue = await postForm(`${s.B}/q/test/${q}/clone`, {});
      expect(cloneQue.status).toBe(409);
      expect(await cloneQue.text()).toBe('409 - Couldn\'t clone message. ["fail", "cannot clone message in que state"].');
    } finally {
      await s.w.mgr.cmd('resume_queue', 'test');
    }
  });

  it("clone, run_now, adminoper, restart and ack_errs answer a JSON client in JSON: the clone's id, the queue's reply, what was done", async () => {
    const id = await send(s.B, 'test', { param1: 'done' });
    await waitState(s.B, 'test', id, ['done']);
    // x_format=json in the form body, as in the query or by Accept.
    const clone = await postForm(`${s.B}/q/test/${id}/clone`, { x_format: 'json' });
    const [ok, full] = (await clone.json()) as [string, string];
    expect([clone.status, ok, full]).toEqual([200, 'ok', expect.stringMatching(new RegExp(`^${s.w.origin}/q/test/\\d{8}\\.`))]);
    await waitState(s.B, 'test', full.split('/').pop()!, ['done']);
    const run = await fetch(`${s.B}/q/test/${id}/run_now`, { method: 'POST', headers: { accept: 'application/json' } });
    expect([run.status, await run.json()]).toEqual([409, ['fail', 'msg not in runnable state']]);
    await s.w.mgr.cmd('pause_queue', 'test');
    try {
      const held = await send(s.B, 'test', { param1: 'done' });
      const now = await postForm(`${s.B}/q/test/${held}/run_now?x_format=json`, {});
      expect([now.status, await now.json()]).toEqual([200, ['ok', 'msg sent to front of run queue']]);
    } finally {
      await s.w.mgr.cmd('resume_queue', 'test');
    }
    const paused = await postForm(`${s.B}/q/other/adminoper?x_format=json`, { pause: '1' });
    expect([paused.status, await paused.json()]).toEqual([200, ['ok', 'queue other paused']]);
    const resumed = await postForm(`${s.B}/q/other/adminoper`, { resume: '1', x_format: 'json' });
    expect([resumed.status, await resumed.json()]).toEqual([200, ['ok', 'queue other resumed']]);
    const acked = await postForm(`${s.B}/q/other/ack_errs`, { x_format: 'json' });
    expect([acked.status, await acked.json()]).toEqual([200, ['ok', 0]]);
    const restarted = await postForm(`${s.B}/q/other/restart`, { x_format: 'json' });
    expect([restarted.status, await restarted.json()]).toEqual([200, ['ok', 'queue other restarted']]);
  });

  it('unknown message ids are 404 for the message routes', async () => {
    for (const p of [
      '/q/test/20200101.0000.00.000.1',
      '/q/test/20200101.0000.00.000.1.json',
      '/q/test/20200101.0000.00.000.1/state.json',
      '/q/test/20200101.0000.00.000.1/log/stdio.log',
    ]) {
      expect((await fetch(s.B + p)).status, p).toBe(404);
    }
  });
});
