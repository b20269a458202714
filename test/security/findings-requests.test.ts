// The security findings about requests: bad input refused with a 4xx naming the field and changing nothing, and a create whose reply is lost made once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WebRoot, postForm, send, startWebRoot, waitState } from '../web/web-root.js';
import { messageIds, supervisedPids } from './fuzz-helpers.js';

describe('bad requests get a 4xx that names the field, and change nothing (finding 5)', () => {
  let w: WebRoot;
  beforeAll(async () => {
    w = await startWebRoot({ config: { max_field_bytes: 4096, max_body_bytes: 300_000 } });
  }, 60_000);
  afterAll(async () => {
    await w?.stop();
  });

  async function refused(res: Response | Promise<Response>, status: number, text: string | RegExp): Promise<void> {
    const r = await res;
    const body = await r.text();
    expect(r.status, body).toBe(status);
    if (typeof text === 'string') expect(body).toBe(text);
    else expect(body).toMatch(text);
  }

  // First after the web process starts: a mutation run credits what it runs at load (its module-level constants) to the first test.
  it('a query name that would reach Object.prototype is refused, naming it, at any level; the others of the query are read as before', async () => {
    // done.json reads `limit` from the query itself: a `__proto__[limit]` kept would be read as its limit.
    for (const [query, name] of [
      ['__proto__[limit]=x', '__proto__'],
      ['constructor=1', 'constructor'],
      ['prototype=1&prototype=2', 'prototype'],
      ['query[constructor]=x', 'query[constructor]'],
    ]) {
      const res = await fetch(`${w.base}/q/test/done.json?limit=1&${query}`);
      expect([res.status, await res.json()], query).toEqual([
        400,
        ['fail', `parameter name: expected a name without __proto__, constructor or prototype, received "${name}"`],
      ]);
    }
    expect((await fetch(`${w.base}/q/test/done.json?limit=1&toString=1`)).status).toBe(200);
  });

  it('each refusal below answers its status and text, and no message appears', async () => {
    const before = await messageIds(w.root, 'test');
    const post = (body: BodyInit, headers: Record<string, string> = {}) => fetch(`${w.base}/q/test/new_message`, { method: 'POST', body, headers });
    const mesg = (m: Record<string, unknown>) => new URLSearchParams({ mesg: JSON.stringify({ dest: 'test', ...m }) });
    // A param exec could not pass to the script: refused at create, with its size and the limit.
    await refused(
      post(mesg({ param1: 'x'.repeat(200_000) })),
      400,
      /^\["fail","param1: expected at most 131056 bytes \(a script gets it as one environment variable, and exec takes at most 128 KiB\), received 200000 bytes"\]$/,
    );
    await refused(post(mesg({ max_count: 'many' })), 400, /^\["fail","max_count: expected/);
    await refused(post(mesg({ idempotency_key: 'a\nb' })), 400, /^\["fail","idempotency_key: expected a key of 1 to 255 printable characters/);
    // A number JavaScript reads as Infinity would reach the queue as null, its field silently gone: refused by name in a
    // JSON body, a JSON line and a mesg text.
    const beyond = (field: string) => `["fail","${field}: expected a number of at most ±1.7976931348623157e308, received a number beyond it"]`;
    await refused(post('{"dest":"test","priority":1e400}', { 'content-type': 'application/json' }), 400, beyond('priority'));
    await refused(post(new URLSearchParams({ mesg: '{"dest":"test","timeout":-1e999}', x_format: 'json' })), 400, beyond('timeout'));
    const batch = fetch(`${w.base}/q/test/new_messages`, {
      method: 'POST',
      body: '{"dest":"test"}\n{"dest":"test","tags":[1e400]}\n',
      headers: { 'content-type': 'application/x-ndjson' },
    });
    await refused(batch, 400, beyond('tags[0]'));
    // Malformed multipart, cut short (before x_format is read, so in plain text).
    await refused(
      post('--b\r\nContent-Disposition: form-data; name="mesg"\r\n\r\n{"dest"', { 'content-type': 'multipart/form-data; boundary=b' }),
      400,
      '400 - request body: expected a well-formed multipart/form-data body, received one that does not parse (Unexpected end of multipart data)',
    );
    // Nesting deeper than the limit, as JSON, as a form key and inside mesg.
    await refused(
      post(JSON.stringify({ mesg: JSON.parse(`${'{"a":'.repeat(40)}1${'}'.repeat(40)}`) }), { 'content-type': 'application/json' }),
      400,
      '["fail","request body: expected nesting at most 32 deep, received 33 levels"]',
    );
    await refused(
      post(`a${'[b]'.repeat(40)}=1`, { 'content-type': 'application/x-www-form-urlencoded' }),
      400,
      /^400 - parameter name: expected a name nested at most 32 deep, received "a\[b\]/,
    );
    await refused(
      post(new URLSearchParams({ mesg: `${'['.repeat(5000)}${']'.repeat(5000)}` })),
      400,
      '["fail","mesg: expected nesting at most 32 deep, received 33 levels"]',
    );
    // A multipart field over max_field_bytes is refused, never used cut.
    const big = new FormData();
    big.set('mesg', JSON.stringify({ dest: 'test', param1: 'y'.repeat(5000) }));
    await refused(post(big), 413, '413 - "mesg": expected at most 4096 bytes (max_field_bytes in config/config.json), received more');
    // A body over max_body_bytes.
    await refused(post(mesg({ src: 'z'.repeat(400_000) })), 413, /^413 - Request body too large: forms and JSON are limited to 300000 bytes \(max_body_bytes/);
    // Bad URL encoding is no crash: a cut UTF-8 sequence is refused naming its field, never read as U+FFFD.
    await refused(
      post('mesg=%E0%A4%A', { 'content-type': 'application/x-www-form-urlencoded' }),
      400,
      '400 - mesg: expected UTF-8 text (each %-escape a byte of a UTF-8 sequence), received 1 byte sequence that is not UTF-8',
    );
    expect(await messageIds(w.root, 'test')).toEqual(before);
  });

  it('a refusal of a message in the wrong state is a 409 with the classic text, not a 500', async () => {
    const id = await send(w.base, 'test', { param1: 'done' });
    await waitState(w.base, 'test', id, ['done']);
    const res = await postForm(`${w.base}/q/test/${id}/run_now`, {});
    expect(res.status).toBe(409);
    expect(await res.text()).toBe('409 - Couldn\'t run message. ["fail", "msg not in runnable state"].');
    const json = await fetch(`${w.base}/q/test/${id}`, { method: 'POST', body: new URLSearchParams({ _method: 'commit', x_format: 'json' }) });
    expect(json.status).toBe(404);
    expect(await json.json()).toEqual(['fail', 'cannot find message']);
  });
});

describe('a create whose reply is lost (finding 6)', () => {
  let w: WebRoot;
  beforeAll(async () => {
    // The web gives up on a silent queue after 1 s instead of 10, so the test does not wait out the default.
    w = await startWebRoot({ config: { queue_reply_timeout_s: 1 } });
    await w.mgr.cmd('pause_queue', 'test');
  }, 60_000);
  afterAll(async () => {
    await w?.stop();
  });

  it('answers 202 with the key, never an error; the same create again answers the one message it made', async () => {
    const before = await messageIds(w.root, 'test');
    const pid = (await supervisedPids(w.root)).test!;
    const body = new URLSearchParams({ mesg: JSON.stringify({ dest: 'test', param1: 'done', idempotency_key: 'order-42' }) });
    // A stopped queue process takes the request into its socket and answers nothing until it runs again.
    process.kill(pid, 'SIGSTOP');
    let res: Response;
    try {
      res = await fetch(`${w.base}/q/test/new_message`, { method: 'POST', body });
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    expect(res.status).toBe(202);
    expect(res.headers.get('idempotency-key')).toBe('order-42');
    expect(await res.json()).toEqual([
      'accepted',
      {
        idempotency_key: 'order-42',
        text: 'queue test took the request but did not answer in time; send it again with idempotency_key order-42 to learn the message id',
      },
    ]);
    const again = (await (await fetch(`${w.base}/q/test/new_message`, { method: 'POST', body })).json()) as [string, string];
    expect(again[0]).toBe('ok');
    const made = (await messageIds(w.root, 'test')).filter((id) => !before.includes(id));
    expect(made).toEqual([again[1].split('/').pop()]);
  }, 30_000);

  it('a key in the Idempotency-Key header works as one in the message', async () => {
    const headers = { 'idempotency-key': 'hdr-1' };
    const first = (await (
      await fetch(`${w.base}/q/test/new_message`, { method: 'POST', headers, body: new URLSearchParams({ mesg: '{"dest":"test"}' }) })
    ).json()) as string[];
    const second = (await (
      await fetch(`${w.base}/q/test/new_message`, { method: 'POST', headers, body: new URLSearchParams({ mesg: '{"dest":"test"}' }) })
    ).json()) as string[];
    expect(first[0]).toBe('ok');
    expect(second).toEqual(first);
  });
});
