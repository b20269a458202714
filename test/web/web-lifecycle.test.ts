// Lifecycle routes against a real rq-mgr + web process (rq-beyond §B1.11): cancel, requeue, reschedule, priority, history, requeue_errs, running and waiting.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/rq-root.js';
import { type WebRoot, cookiesOf, postForm, send, startWebRoot, stateOf, waitState } from './web-root.js';

let w: WebRoot;
let B: string;

beforeAll(async () => {
  w = await startWebRoot({ queues: { test: {}, other: {}, errs: {} } });
  B = w.base;
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

describe('cancel, requeue and history over HTTP (rq-beyond §B1.11, §B5, §B6, §B14)', () => {
  const later = () => Math.floor(Date.now() / 1000) + 3600;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const message = async (q: string, id: string): Promise<any> => (await fetch(`${B}/q/${q}/${id}.json`)).json();
  const json = async (res: Response) => {
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    return res.json();
  };

  it('x_format json: the queue reply with 200, 409 for a wrong state, 404 for no message, 400 for a bad field', async () => {
    const a = await send(B, 'test', { param1: 'done', due: later() });
    const cancel = await postForm(`${B}/q/test/${a}/cancel`, { x_format: 'json', reason: 'web reason' });
    expect(cancel.status).toBe(200);
    expect(await json(cancel)).toEqual(['ok', 'msg cancelled']);
    expect(await message('test', a)).toMatchObject({
      state: 'err',
      outcome: 'cancelled',
      status: 'err - CANCELLED - web reason',
      cancel: { by: 'web:127.0.0.1', reason: 'web reason' },
    });
    const twice = await postForm(`${B}/q/test/${a}/cancel`, { x_format: 'json' });
    expect(twice.status).toBe(409);
    expect(await json(twice)).toEqual(['fail', 'msg already finished (err)']);

    // _method=cancel on the message URL is the same action; the default reason names the web actor.
    const b = await send(B, 'test', { param1: 'done', due: later() });
    const viaMethod = await postForm(`${B}/q/test/${b}`, { _method: 'cancel', x_format: 'json' });
    expect(viaMethod.status).toBe(200);
    expect(await json(viaMethod)).toEqual(['ok', 'msg cancelled']);
    expect(await message('test', b)).toMatchObject({ state: 'err', status: 'err - CANCELLED - by web:127.0.0.1', cancel: { by: 'web:127.0.0.1' } });

    const done = await send(B, 'test', { param1: 'done' });
    await waitState(B, 'test', done, ['done']);
    const late = await postForm(`${B}/q/test/${done}/cancel`, { x_format: 'json' });
    expect(late.status).toBe(409);
    expect(await json(late)).toEqual(['fail', 'msg already finished (done)']);
    const none = await postForm(`${B}/q/test/20200101.0000.00.000.1/cancel`, { x_format: 'json' });
    expect(none.status).toBe(404);
    expect(await json(none)).toEqual(['fail', 'msg not found']);
    const long = await postForm(`${B}/q/test/${b}/cancel`, { x_format: 'json', reason: 'x'.repeat(1001) });
    expect(long.status).toBe(400);
    expect(await json(long)).toEqual(['fail', 'reason: expected text of at most 1000 characters without NUL, received 1001 characters']);

    // requeue: err → que under the same id, outcome and cancel cleared, due as asked.
    const before = Date.now() / 1000;
    const requeue = await postForm(`${B}/q/test/${a}/requeue`, { x_format: 'json', delay: '3600' });
    expect(requeue.status).toBe(200);
    expect(await json(requeue)).toEqual(['ok', 'msg requeued']);
    const back = await message('test', a);
    expect(back.state).toBe('que');
    expect(back.outcome).toBeUndefined();
    expect(back.cancel).toBeUndefined();
    expect(back.due).toBeGreaterThanOrEqual(before + 3599);
    const notErr = await postForm(`${B}/q/test/${a}/requeue`, { x_format: 'json' });
    expect(notErr.status).toBe(409);
    expect(await json(notErr)).toEqual(['fail', 'msg not in err (que)']);
    const badDelay = await postForm(`${B}/q/test/${b}/requeue`, { x_format: 'json', delay: '-5' });
    expect(badDelay.status).toBe(400);
    expect(await json(badDelay)).toEqual(['fail', 'delay: expected seconds >= 0, ending by 253402300799 (the end of year 9999), received "-5"']);
    const both = await postForm(`${B}/q/test/${b}/requeue`, { x_format: 'json', due: '1', delay: '1' });
    expect(both.status).toBe(400);
    expect(await json(both)).toEqual(['fail', 'give due or delay, not both']);
    const noMsg = await postForm(`${B}/q/test/20200101.0000.00.000.1/requeue`, { x_format: 'json' });
    expect(noMsg.status).toBe(404);
    expect(await json(noMsg)).toEqual(['fail', 'msg not found']);
    // The refused requests changed nothing.
    expect(await stateOf(B, 'test', b)).toBe('err');
    expect(await stateOf(B, 'test', a)).toBe('que');
    await postForm(`${B}/q/test/${a}/cancel`, { x_format: 'json' });
  });

  it('html (the default): flash + 303 to the message page; a refusal is the classic "Couldn\'t" text with its status', async () => {
    const flashOf = async (res: Response, id: string) => {
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe(`${w.origin}/q/test/${id}`);
      return (await fetch(`${B}/q/test/${id}`, { headers: { cookie: cookiesOf(res) } })).text();
    };
    const a = await send(B, 'test', { param1: 'done', due: later() });
    expect(await flashOf(await postForm(`${B}/q/test/${a}/cancel`, {}), a)).toMatch(/<div id="flash-notice"[^>]*>Message cancelled successfully</);
    expect(await stateOf(B, 'test', a)).toBe('err');
    const b = await send(B, 'test', { param1: 'done', due: later() });
    expect(await flashOf(await postForm(`${B}/q/test/${b}`, { _method: 'cancel' }), b)).toMatch(/<div id="flash-notice"[^>]*>Message cancelled successfully</);
    expect(await stateOf(B, 'test', b)).toBe('err');

    // Requeued with the default due (now): it runs and ends done.
    expect(await flashOf(await postForm(`${B}/q/test/${a}/requeue`, {}), a)).toMatch(/<div id="flash-notice"[^>]*>Message requeued successfully</);
    await waitState(B, 'test', a, ['done']);

    // A running message: TERM, and the flash says it is on its way out.
    const run = await send(B, 'test', { param1: 'forever' });
    await waitState(B, 'test', run, ['run']);
    expect(await flashOf(await postForm(`${B}/q/test/${run}/cancel`, { reason: 'too slow' }), run)).toMatch(
      /<div id="flash-notice"[^>]*>Message is being cancelled</,
    );
    await waitState(B, 'test', run, ['err', 'que', 'done']);
    expect(await message('test', run)).toMatchObject({ state: 'err', outcome: 'cancelled', status: 'err - CANCELLED - too slow' });

    const finished = await postForm(`${B}/q/test/${a}/cancel`, {});
    expect(finished.status).toBe(409);
    expect(await finished.text()).toBe('409 - Couldn\'t cancel message. ["fail", "msg already finished (done)"].');
    const notErr = await postForm(`${B}/q/test/${a}/requeue`, {});
    expect(notErr.status).toBe(409);
    expect(await notErr.text()).toBe('409 - Couldn\'t requeue message. ["fail", "msg not in err (done)"].');
    const none = await postForm(`${B}/q/test/20200101.0000.00.000.1/cancel`, {});
    expect(none.status).toBe(404);
    expect(await none.text()).toBe('404 - Couldn\'t cancel message. ["fail", "msg not found"].');
  });

  it('history.json and the message page: the buttons follow the state, the Timeline lists the moves', async () => {
    const id = await send(B, 'test', { param1: 'done', due: later() });
    const quePage = await (await fetch(`${B}/q/test/${id}`)).text();
    expect(quePage).toContain('id="btn-cancel"');
    expect(quePage).not.toContain('id="btn-requeue"');
    expect(quePage).toContain('id="timeline"');
    await postForm(`${B}/q/test/${id}/cancel`, { x_format: 'json', reason: 'timeline test' });

    const res = await fetch(`${B}/q/test/${id}/history.json`);
    expect(res.status).toBe(200);
    const lines = (await json(res)) as Record<string, unknown>[];
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ from: null, to: 'que', actor: 'create' });
    expect(lines[1]).toMatchObject({ from: 'que', to: 'err', actor: 'web:127.0.0.1', outcome: 'cancelled', reason: 'CANCELLED - timeline test' });
    for (const l of lines) expect(l.at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

    const errPage = await (await fetch(`${B}/q/test/${id}`)).text();
    expect(errPage).toContain('id="btn-requeue"');
    expect(errPage).not.toContain('id="btn-cancel"');
    const timeline = errPage.slice(errPage.indexOf('<section class="card" id="timeline">'));
    // Each step in the colour of where it led: time, step, actor, reason (with the line's other keys in small print).
    const rows = [
      ...timeline.matchAll(
        /<li class="step ([^"]+)"><time class="t-at" datetime="[^"]+">([^<]+)<\/time><span class="t-step">([^<]+)<\/span><span class="t-actor">([^<]*)<\/span><span class="t-reason">(.*?)<\/span><span class="t-after/g,
      ),
    ].map((r) => [r[1], r[2], r[3], r[4], r[5].replace(/<[^>]+>/g, '')]);
    expect(rows).toEqual([
      ['to-que', lines[0].at, 'created → que', 'create', ''],
      ['to-err', lines[1].at, 'que → err', 'web:127.0.0.1', 'CANCELLED - timeline test outcome cancelled'],
    ]);

    expect((await fetch(`${B}/q/test/20200101.0000.00.000.1/history.json`)).status).toBe(404);

    // get_history is answered while the queue is DOWN; cancel is refused.
    const other = await send(B, 'other', { param1: 'done', due: later() });
    await w.mgr.cmd('down_queue', 'other');
    try {
      await waitFor(async () => (await (await fetch(`${B}/q/other.txt`)).text()) === '\nstatus: DOWN\n\n', 'DOWN status text');
      const down = await fetch(`${B}/q/other/${other}/history.json`);
      expect(down.status).toBe(200);
      expect(((await down.json()) as { to: string }[]).map((l) => l.to)).toEqual(['que']);
      const refused = await postForm(`${B}/q/other/${other}/cancel`, { x_format: 'json' });
      expect(refused.status).toBe(503);
      expect(await refused.json()).toEqual(['fail', 'status: DOWN']);
    } finally {
      await w.mgr.cmd('up_queue', 'other');
    }
    expect(await stateOf(B, 'other', other)).toBe('que');
    await postForm(`${B}/q/other/${other}/cancel`, { x_format: 'json' });
  });
});

describe('reschedule, priority, purge, requeue_errs, running and waiting over HTTP (rq-beyond §B1.11)', () => {
  const later = () => Math.floor(Date.now() / 1000) + 3600;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const message = async (q: string, id: string): Promise<any> => (await fetch(`${B}/q/${q}/${id}.json`)).json();

  it('reschedule and priority: JSON replies the new value, HTML flashes; the que page shows both forms; bad values are 400', async () => {
    const id = await send(B, 'test', { param1: 'done', due: later() });
    const page = await (await fetch(`${B}/q/test/${id}`)).text();
    for (const el of ['id="priority-form"', 'id="reschedule-form"', 'id="btn-reschedule"']) expect(page).toContain(el);
    const due = later() + 60;
    const r = await postForm(`${B}/q/test/${id}/reschedule`, { x_format: 'json', due: String(due) });
    expect([r.status, await r.json()]).toEqual([200, ['ok', due]]);
    expect((await message('test', id)).due).toBe(due);
    const p = await postForm(`${B}/q/test/${id}/priority`, { x_format: 'json', priority: '-7' });
    expect([p.status, await p.json()]).toEqual([200, ['ok', -7]]);
    expect((await message('test', id)).priority).toBe(-7);
    const bad = await postForm(`${B}/q/test/${id}/priority`, { x_format: 'json', priority: '1.5' });
    expect([bad.status, await bad.json()]).toEqual([400, ['fail', 'priority: expected a whole number from -1000000 to 1000000, received "1.5"']]);
    // HTML: the form's delay 0 makes it due now, so it runs and ends done.
    const html = await postForm(`${B}/q/test/${id}/reschedule`, { delay: '0' });
    expect(html.status).toBe(303);
    expect(await (await fetch(`${B}/q/test/${id}`, { headers: { cookie: cookiesOf(html) } })).text()).toMatch(
      /<div id="flash-notice"[^>]*>Message rescheduled successfully</,
    );
    await waitState(B, 'test', id, ['done']);
    const finished = await postForm(`${B}/q/test/${id}/reschedule`, { x_format: 'json', delay: '5' });
    expect([finished.status, await finished.json()]).toEqual([409, ['fail', 'msg not in que or prep (done)']]);
  });

  it('cancel with purge removes the message; HTML goes back to the queue page', async () => {
    const a = await send(B, 'test', { param1: 'done', due: later() });
    const j = await postForm(`${B}/q/test/${a}/cancel`, { x_format: 'json', purge: 'true' });
    expect([j.status, await j.json()]).toEqual([200, ['ok', 'msg cancelled']]);
    expect((await fetch(`${B}/q/test/${a}.json`)).status).toBe(404);
    const b = await send(B, 'test', { param1: 'done', due: later() });
    const h = await postForm(`${B}/q/test/${b}/cancel`, { purge: 'true' });
    expect(h.status).toBe(303);
    expect(h.headers.get('location')).toBe(`${w.origin}/q/test`);
    expect((await fetch(`${B}/q/test/${b}.json`)).status).toBe(404);
  });

  it('requeue_errs: JSON the count, HTML a flash on the queue page; a bad outcome is 400 and moves nothing', async () => {
    const ids = [await send(B, 'errs', { param1: 'err' }), await send(B, 'errs', { param1: 'err' })];
    for (const id of ids) await waitState(B, 'errs', id, ['err']);
    const page = await (await fetch(`${B}/q/errs`)).text();
    expect(page).toContain('id="btn-requeue-errs"');
    const bad = await postForm(`${B}/q/errs/requeue_errs`, { x_format: 'json', outcome: 'bogus' });
    expect(bad.status).toBe(400);
    expect((await bad.json())[1]).toMatch(/^outcome: expected one of failed, exhausted, .*, received "bogus"$/);
    const badHtml = await postForm(`${B}/q/errs/requeue_errs`, { limit: '0' });
    expect(badHtml.status).toBe(400);
    expect(await badHtml.text()).toMatch(/^400 - Couldn't requeue errs\. \["fail", "limit: expected a whole number from 1 to \d+, received \\"0\\""\]\.$/);
    expect(await Promise.all(ids.map((id) => stateOf(B, 'errs', id)))).toEqual(['err', 'err']);
    const one = await postForm(`${B}/q/errs/requeue_errs`, { x_format: 'json', limit: '1' });
    expect([one.status, await one.json()]).toEqual([200, ['ok', 1]]);
    // The oldest went first; it fails again (param1 err), which is how we know it ran.
    const steps = async (id: string) =>
      ((await (await fetch(`${B}/q/errs/${id}/history.json`)).json()) as { from: string; to: string }[]).map((l) => `${l.from}→${l.to}`);
    await waitFor(async () => (await steps(ids[0])).join() === 'null→que,que→run,run→err,err→que,que→run,run→err', 'the requeued message to fail again');
    expect(await steps(ids[1])).toEqual(['null→que', 'que→run', 'run→err']);
    const html = await postForm(`${B}/q/errs/requeue_errs`, {});
    expect(html.status).toBe(303);
    expect(html.headers.get('location')).toBe(`${w.origin}/q/errs`);
    expect(await (await fetch(`${B}/q/errs`, { headers: { cookie: cookiesOf(html) } })).text()).toMatch(/<div id="flash-notice"[^>]*>2 messages requeued</);
  });

  it('running.json lists the running script with its pid; waiting.json the delayed messages; a bad reason is 400', async () => {
    const run = await send(B, 'other', { param1: 'forever' });
    await waitState(B, 'other', run, ['run']);
    const running = (await (await fetch(`${B}/q/other/running.json`)).json()) as { msg_id: string; pid: number; attempt: number }[];
    expect(running).toEqual([expect.objectContaining({ msg_id: run, attempt: 1, pid: expect.any(Number) })]);
    const due = later();
    const delayed = await send(B, 'other', { param1: 'done', due });
    const waiting = await fetch(`${B}/q/other/waiting.json?reason=delayed`);
    expect(waiting.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await waiting.json()).toContainEqual({ msg_id: delayed, reason: 'delayed', due });
    const bad = await fetch(`${B}/q/other/waiting.json?reason=bogus`);
    expect([bad.status, await bad.json()]).toEqual([400, ['fail', 'reason: expected one of delayed, coalesced, dependencies, limit, received "bogus"']]);
    expect((await fetch(`${B}/q/nope/running.json`)).status).toBe(404);
    for (const id of [run, delayed]) await postForm(`${B}/q/other/${id}/cancel`, { x_format: 'json' });
  });

  it('the new-message form has an Advanced fieldset; its filled fields arrive, empty ones are left out', async () => {
    const form = await (await fetch(`${B}/q/test/new_message`)).text();
    const advanced = form.slice(form.indexOf('id="mesg_advanced"'), form.indexOf('</details>'));
    expect([...advanced.matchAll(/<input type="text" id="(mesg_\w+)"/g)].map((m) => m[1])).toEqual([
      'mesg_priority',
      'mesg_max_retries',
      'mesg_backoff_base',
      'mesg_min_retry_delay',
      'mesg_max_retry_delay',
      'mesg_retry_jitter',
      'mesg_max_age',
      'mesg_expire_at',
      'mesg_timeout',
      'mesg_heartbeat_timeout',
      // rq-beyond §B8, §B12 (mesg_depends_fail, between them, is a select).
      'mesg_depends',
      'mesg_limit',
      'mesg_limit_concurrency',
    ]);
    const fields: Record<string, string> = { x_format: 'json', 'mesg[dest]': 'test', 'mesg[param1]': 'done', 'mesg[priority]': '5', 'mesg[timeout]': '30' };
    for (const f of ['max_retries', 'backoff_base', 'min_retry_delay', 'max_retry_delay', 'retry_jitter', 'max_age', 'expire_at', 'heartbeat_timeout'])
      fields[`mesg[${f}]`] = '';
    const res = await postForm(`${B}/q/test/new_message`, { ...fields, 'mesg[due]': String(later()) });
    const id = ((await res.json()) as string[])[1].split('/').pop()!;
    const m = await message('test', id);
    expect(m).toMatchObject({ priority: 5, timeout: 30 });
    for (const f of ['max_retries', 'retry_jitter', 'expire_at', 'heartbeat_timeout']) expect(m).not.toHaveProperty(f);
    const bad = await postForm(`${B}/q/test/new_message`, { ...fields, 'mesg[retry_jitter]': '2' });
    expect(bad.status).toBe(400);
    await postForm(`${B}/q/test/${id}/cancel`, { x_format: 'json' });
  });
});
