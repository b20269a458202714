// POST /q/<q>/<id>/undepend against a real rq-mgr and queues (rq-beyond §B8): JSON and HTML replies, bad input a 4xx naming the field that changes nothing, a DOWN queue a 503.
import { beforeAll, describe, expect, it } from 'vitest';
import { type WebRoot, cookiesOf, postForm, send, waitState } from './web-root.js';
import { HOSTILE, NOT_BOTH, REF_TEXT, dependsLimitsWeb } from './depends-limits-harness.js';

const web = dependsLimitsWeb();
const { queued, message, undepend, page, spool, cancel } = web;
let w: WebRoot;
let B: string;
beforeAll(() => {
  ({ w, B } = web);
});

describe('POST /q/<q>/<id>/undepend', () => {
  it('JSON: drops one ref, then the rest (a full id, an array, a JSON body, all); the reply is what is still awaited; the message then runs', async () => {
    const [x1, x2, x3] = [await queued('up'), await queued('up'), await queued('up')];
    const d = await send(B, 'dn', { param1: 'done', depends: `up/${x1},up/${x2},up/${x3}` });
    expect(await undepend('dn', d, { depends: `up/${x1}` })).toEqual([200, ['ok', [`up/${x2}`, `up/${x3}`]]]);
    // A ref it does not wait for is ignored.
    expect(await undepend('dn', d, { depends: 'up/20200101.0000.00.000.1' })).toEqual([200, ['ok', [`up/${x2}`, `up/${x3}`]]]);
    expect(await message('dn', d)).toMatchObject({
      state: 'que',
      depends: [`up/${x2}`, `up/${x3}`],
      waiting: { reason: 'dependencies', waiting_on: [`up/${x2}`, `up/${x3}`] },
    });
    // A full id of this host, as depends[]=: the queue makes it a ref.
    expect(
      await undepend(
        'dn',
        d,
        new URLSearchParams([
          ['x_format', 'json'],
          ['depends[]', `http://127.0.0.1:${w.port}/q/up/${x2}`],
        ]),
      ),
    ).toEqual([200, ['ok', [`up/${x3}`]]]);
    const json = await fetch(`${B}/q/dn/${d}/undepend`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ x_format: 'json', depends: [`up/${x3}`] }),
    });
    expect([json.status, await json.json()]).toEqual([200, ['ok', []]]);
    await waitState(B, 'dn', d, ['done']);

    const d2 = await send(B, 'dn', { param1: 'done', depends: [`up/${x1}`, `up/${x2}`] });
    expect(await undepend('dn', d2, { all: 'true' })).toEqual([200, ['ok', []]]);
    await waitState(B, 'dn', d2, ['done']);
    expect(await undepend('dn', d2, { all: '1' })).toEqual([409, ['fail', 'msg is not waiting on dependencies']]);
    expect(await undepend('dn', '20200101.0000.00.000.1', { all: 'true' })).toEqual([404, ['fail', 'msg not found']]);
    for (const x of [x1, x2, x3]) await cancel('up', x);
  });

  it("HTML: a flash and 303 to the message page or back; a refusal is the classic Couldn't text", async () => {
    const [x1, x2] = [await queued('up'), await queued('up')];
    const d = await send(B, 'dn', { param1: 'done', depends: [`up/${x1}`, `up/${x2}`] });
    const one = await postForm(`${B}/q/dn/${d}/undepend`, { depends: `up/${x1}` });
    expect([one.status, one.headers.get('location')]).toEqual([303, `${w.origin}/q/dn/${d}`]);
    expect(await page(`/q/dn/${d}`, { headers: { cookie: cookiesOf(one) } })).toMatch(
      new RegExp(`<div id="flash-notice"[^>]*>Still waiting on up/${x2.replaceAll('.', '\\.')}<`),
    );
    const all = await postForm(`${B}/q/dn/${d}/undepend`, { all: 'on', back: '/q/dn' });
    expect([all.status, all.headers.get('location')]).toEqual([303, `${w.origin}/q/dn`]);
    expect(await page('/q/dn', { headers: { cookie: cookiesOf(all) } })).toMatch(/<div id="flash-notice"[^>]*>No longer waiting on dependencies</);
    await waitState(B, 'dn', d, ['done']);
    const again = await postForm(`${B}/q/dn/${d}/undepend`, { all: 'on' });
    expect([again.status, await again.text()]).toEqual([409, '409 - Couldn\'t undepend message. ["fail", "msg is not waiting on dependencies"].']);
    const none = await postForm(`${B}/q/dn/20200101.0000.00.000.1/undepend`, { all: 'on' });
    expect([none.status, await none.text()]).toEqual([404, '404 - Couldn\'t undepend message. ["fail", "msg not found"].']);
    const bad = await postForm(`${B}/q/dn/${d}/undepend`, { depends: 'x' });
    expect([bad.status, bad.headers.get('content-type'), await bad.text()]).toEqual([
      400,
      'text/plain; charset=utf-8',
      `400 - depends[0]: expected ${REF_TEXT}, received "x"`,
    ]);
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
      [
        new URLSearchParams([
          ['x_format', 'json'],
          ['all[]', '1'],
        ]),
        'all: expected true or false, received ["1"]',
      ],
      [{ depends: 'x' }, `depends[0]: expected ${REF_TEXT}, received "x"`],
      [{ depends: `up/${x},${HOSTILE}` }, `depends[1]: expected ${REF_TEXT}, received ${JSON.stringify(HOSTILE)}`],
      [{ depends: `../up/${x}` }, `depends[0]: expected ${REF_TEXT}, received "../up/${x}"`],
      [{ depends: many }, 'depends: expected at most 1000 refs, received 1001'],
      // The queue knows its own host URL: another host's full id is refused there.
      [
        { depends: `http://elsewhere.example:3333/q/up/${x}` },
        `depends[0]: only messages of this host can be depended on (or of another host of its fleet; config.json names none), received http://elsewhere.example:3333/q/up/${x}`,
      ],
    ];
    for (const [form, text] of refusals)
      expect(await undepend('dn', d, form), String(new URLSearchParams(form as Record<string, string>)).slice(0, 80)).toEqual([400, ['fail', text]]);
    const obj = await fetch(`${B}/q/dn/${d}/undepend`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ x_format: 'json', depends: { a: 1 } }),
    });
    expect([obj.status, await obj.json()]).toEqual([
      400,
      ['fail', 'depends: expected an array of message refs (<queue>/<id>) or a comma-separated string, received {"a":1}'],
    ]);
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
