// A misspelt field of a create is a 400 naming it and the field meant (and a message of more than 1,000 keys a 400 naming their number), in every body shape; every field and key a classic client sends is still taken, against a real rq-mgr + web.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WebRoot, startWebRoot } from './web-root.js';

let w: WebRoot;
let B: string;

beforeAll(async () => {
  w = await startWebRoot({ queues: { test: {} } });
  B = w.base;
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

const post = (path: string, type: string, body: string) =>
  fetch(`${B}${path}`, { method: 'POST', headers: { 'content-type': type }, body, redirect: 'manual' });
const TYPO = 'prioirty: unknown field; did you mean "priority"?';

/** What the queue stored, read back as the classic .json view. */
async function stored(res: Response): Promise<Record<string, unknown>> {
  const body = (await res.json()) as [string, string];
  expect(body[0], JSON.stringify(body)).toBe('ok');
  return (await (await fetch(`${B}/q/test/${body[1].split('/').pop()}.json`)).json()) as Record<string, unknown>;
}

describe('a misspelt field is refused', () => {
  it('in a bare JSON body, a mesg JSON text and mesg[...] form fields: 400 naming the field and the one meant, nothing made', async () => {
    const counts = async () => {
      const { uptime: _, ...rest } = (await (await fetch(`${B}/q/test.json`)).json()) as Record<string, unknown>;
      return rest;
    };
    const before = await counts();
    const json = await post('/q/test/new_message', 'application/json', JSON.stringify({ dest: 'test', prioirty: 5 }));
    expect([json.status, await json.json()]).toEqual([400, ['fail', TYPO]]);
    const mesg = await post(
      '/q/test/new_message',
      'application/x-www-form-urlencoded',
      new URLSearchParams({ x_format: 'json', mesg: JSON.stringify({ dest: 'test', tgas: 'a' }) }).toString(),
    );
    expect([mesg.status, await mesg.json()]).toEqual([400, ['fail', 'tgas: unknown field; did you mean "tags"?']]);
    const form = await post('/q/test/new_message', 'application/x-www-form-urlencoded', 'x_format=html&mesg[dest]=test&mesg[prioirty]=5');
    expect([form.status, await form.text()]).toEqual([400, `400 - ${TYPO}`]);
    expect(await counts()).toEqual(before);
  });

  it('so is a message of more than 1,000 keys, at once and in the client format, alone or in a batch; nothing made', async () => {
    const keys = Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`k${i}`, 1]));
    const before = await (await fetch(`${B}/q/test.json`)).json();
    const one = await post('/q/test/new_message', 'application/json', JSON.stringify({ dest: 'test', ...keys }));
    expect([one.status, await one.json()]).toEqual([400, ['fail', 'request body: expected a JSON object of at most 1000 keys, received 200001 keys']]);
    const form = await post(
      '/q/test/new_message',
      'application/x-www-form-urlencoded',
      `x_format=json&mesg[dest]=test&${Object.keys(keys)
        .map((k) => `mesg[${k}]=1`)
        .join('&')}`,
    );
    expect([form.status, await form.json()]).toEqual([400, ['fail', 'message: expected an object of at most 1000 fields, received 200001 fields']]);
    const batch = await post('/q/test/new_messages', 'application/json', JSON.stringify([{ param1: 'a' }, keys]));
    expect([batch.status, await batch.json()]).toEqual([
      400,
      ['fail', 'messages[1]: message: expected an object of at most 1000 fields, received 200000 fields'],
    ]);
    expect(await (await fetch(`${B}/q/test.json`)).json()).toMatchObject({ ...(before as object), uptime: expect.anything() });
  });

  it('in a batch: the whole batch, naming the message', async () => {
    const res = await post('/q/test/new_messages', 'application/json', JSON.stringify([{ param1: 'a' }, { param1: 'b', max_retires: 3 }]));
    expect([res.status, await res.json()]).toEqual([400, ['fail', 'messages[1]: max_retires: unknown field; did you mean "max_retries"?']]);
  });
});

describe('classic clients are never refused', () => {
  /** Every field the classic daemon copies, and every key its clients send beside them, which it dropped. */
  const CLASSIC = {
    dest: 'test',
    src: 'classic',
    count: 1,
    max_count: 9,
    param1: 'one',
    param2: 'two',
    param3: 'three',
    param4: 'four',
    post_run_webhook: ['http://127.0.0.1:9/hook'],
    due: 1_000_000_000,
    force_remote: true,
    orig_msg_id: 'http://elsewhere:3333/q/test/20260101.0000.00.000.1',
    _method: 'prep',
    relay_id: 'http://elsewhere:3333/q/test/20260101.0000.00.000.2',
    relay_ok: 'yes',
    // A message read back from GET /q/<q>/<id>.json and sent again.
    msg_id: '20260101.0000.00.000.3',
    status: 'done - ok',
    state: 'done',
    path: 'queues/test/done/20260101/00/00/20260101.0000.00.000.3',
    _attachments: {},
    cloned_from: '20260101.0000.00.000.4',
    dups: [],
    dup: 'http://elsewhere:3333/q/test/20260101.0000.00.000.5',
    child_pid: 4242,
    // A key of the client's own, far from every field: dropped, as the classic daemon dropped it.
    customer: 'acme',
  };
  const COPIED = {
    dest: 'test',
    src: 'classic',
    count: 1,
    max_count: 9,
    param1: 'one',
    param2: 'two',
    param3: 'three',
    param4: 'four',
    post_run_webhook: ['http://127.0.0.1:9/hook'],
    due: 1_000_000_000,
    force_remote: true,
    orig_msg_id: CLASSIC.orig_msg_id,
    state: 'prep',
  };

  it('a bare JSON body (brightroll) and a mesg JSON text (the relay, the webhook script) with every classic key: created, the classic fields copied, the rest dropped', async () => {
    for (const res of [
      await post('/q/test/new_message', 'application/json', JSON.stringify(CLASSIC)),
      await post(
        '/q/test/new_message',
        'application/x-www-form-urlencoded',
        new URLSearchParams({ x_format: 'json', mesg: JSON.stringify(CLASSIC) }).toString(),
      ),
    ]) {
      expect(res.status).toBe(200);
      const m = await stored(res);
      expect(m).toMatchObject(COPIED);
      for (const k of ['relay_id', 'relay_ok', 'customer', 'child_pid', '_method', 'cloned_from', 'dup']) expect(m[k], k).toBeUndefined();
    }
  });

  it('the classic new-message form (mesg[...] fields, its Status and relay_ok radios)', async () => {
    const form = new URLSearchParams({
      x_format: 'html',
      'mesg[dest]': 'test',
      'mesg[src]': 'form',
      'mesg[param1]': 'p',
      'mesg[_method]': 'prep',
      'mesg[relay_ok]': 'yes',
      'mesg[post_run_webhook]': '',
      'mesg[status]': '',
      mesg_submit: 'submit',
    });
    const res = await post('/q/test/new_message', 'application/x-www-form-urlencoded', form.toString());
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/id="result-ok">OK - /);
  });
});
