// The action routes read a JSON client's numbers and booleans as the form's text would say them (`"delay": 60` is `delay=60`), and refuse an object or array naming the field: never a value read as absent, which would act at once or on everything.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/rq-root.js';
import { type WebRoot, send, startWebRoot, stateOf, waitState } from './web-root.js';

let w: WebRoot;
let B: string;

beforeAll(async () => {
  w = await startWebRoot({ queues: { test: {}, errs: {} } });
  B = w.base;
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

const post = (path: string, body: Record<string, unknown>) =>
  fetch(`${B}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ x_format: 'json', ...body }) });
const answer = async (res: Response) => [res.status, await res.json()];
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const message = async (q: string, id: string): Promise<any> => (await fetch(`${B}/q/${q}/${id}.json`)).json();
const later = () => Math.floor(Date.now() / 1000) + 3600;

describe('JSON numbers and booleans in the bodies of the action routes', () => {
  it('requeue with "delay": 60 waits a minute; reschedule with a number delay, priority with a number', async () => {
    const a = await send(B, 'test', { param1: 'err' });
    await waitState(B, 'test', a, ['err']);
    const before = Math.floor(Date.now() / 1000);
    expect(await answer(await post(`/q/test/${a}/requeue`, { delay: 60 }))).toEqual([200, ['ok', 'msg requeued']]);
    const requeued = await message('test', a);
    expect(requeued.state).toBe('que');
    expect(requeued.due).toBeGreaterThanOrEqual(before + 60);

    const b = await send(B, 'test', { param1: 'done', due: later() });
    const rescheduled = await answer(await post(`/q/test/${b}/reschedule`, { delay: 600 }));
    expect(rescheduled).toEqual([200, ['ok', expect.any(Number)]]);
    expect(rescheduled[1][1]).toBeGreaterThanOrEqual(before + 600);
    expect(rescheduled[1][1]).toBeLessThan(later());
    expect(await answer(await post(`/q/test/${b}/priority`, { priority: 5 }))).toEqual([200, ['ok', 5]]);
    expect((await message('test', b)).priority).toBe(5);
  });

  it("a JSON body or Accept without x_format hears the queue's reply, not a 303: cancel, priority, tags, undepend", async () => {
    const a = await send(B, 'test', { param1: 'done', due: later() });
    const bare = (path: string, body: string, headers: Record<string, string>) => fetch(`${B}${path}`, { method: 'POST', headers, body, redirect: 'manual' });
    const json = { 'content-type': 'application/json' };
    const accept = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    expect(await answer(await bare(`/q/test/${a}/priority`, '{"priority":3}', json))).toEqual([200, ['ok', 3]]);
    expect(await answer(await bare(`/q/test/${a}/tags`, 'add=x', accept))).toEqual([200, ['ok', ['x']]]);
    expect(await answer(await bare(`/q/test/${a}/undepend`, 'all=1', accept))).toEqual([409, ['fail', 'msg is not waiting on dependencies']]);
    expect(await answer(await bare(`/q/test/${a}/cancel`, '{"reason":"x"}', json))).toEqual([200, ['ok', 'msg cancelled']]);
    // A browser's form (no JSON asked) still gets its flash and 303.
    const b = await send(B, 'test', { param1: 'done', due: later() });
    const form = await bare(`/q/test/${b}/priority`, 'priority=4', { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' });
    expect(form.status).toBe(303);
  });

  it('cancel with "purge": true removes the message', async () => {
    const a = await send(B, 'test', { param1: 'done', due: later() });
    expect(await answer(await post(`/q/test/${a}/cancel`, { purge: true }))).toEqual([200, ['ok', 'msg cancelled']]);
    expect((await fetch(`${B}/q/test/${a}.json`)).status).toBe(404);
  });

  it('requeue_errs with "limit": 1 requeues one', async () => {
    const ids = [await send(B, 'errs', { param1: 'err' }), await send(B, 'errs', { param1: 'err' })];
    for (const id of ids) await waitState(B, 'errs', id, ['err']);
    expect(await answer(await post('/q/errs/requeue_errs', { limit: 1 }))).toEqual([200, ['ok', 1]]);
    // The oldest went (and fails again: param1 err); the other never left err/.
    const moves = async (id: string) => ((await (await fetch(`${B}/q/errs/${id}/history.json`)).json()) as { to: string }[]).map((l) => l.to);
    await waitFor(async () => (await moves(ids[0])).join() === 'que,run,err,que,run,err', 'the requeued message to fail again');
    expect(await moves(ids[1])).toEqual(['que', 'run', 'err']);
  });

  it('an object or array where text is read is a 400 naming the field, and nothing changes', async () => {
    const a = await send(B, 'test', { param1: 'done', due: later() });
    expect(await answer(await post(`/q/test/${a}/requeue`, { delay: [60] }))).toEqual([
      400,
      ['fail', 'delay: expected a text, a number or true/false, received [60]'],
    ]);
    expect(await answer(await post(`/q/test/${a}/cancel`, { reason: { why: 1 } }))).toEqual([
      400,
      ['fail', 'reason: expected a text, a number or true/false, received {"why":1}'],
    ]);
    expect(await stateOf(B, 'test', a)).toBe('que');
  });
});
