// Tag routes against a real rq-mgr + web process (rq-beyond §B9, §B1.11): tag a message, one queue's tags and pages, the cross-queue merge, /tracked.json, cancel_tagged, bad input.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cookiesOf, postForm, send, waitState } from './web-root.js';
import { B, TAG_TEXT, getJson, message, queued, spool, tagInOrder, tagJson, useWebTagsRoot, w } from './web-tags-harness.js';

useWebTagsRoot();

describe('POST /q/<q>/<id>/tags', () => {
  it('adds and removes (comma-separated, arrays, a JSON body) in any state; the reply is the new list, the history names the web actor', async () => {
    const id = await queued('a');
    expect(await tagJson('a', id, { add: 'x,y' })).toEqual([200, ['ok', ['x', 'y']]]);
    const arrays = new URLSearchParams([
      ['x_format', 'json'],
      ['add[]', 'z'],
      ['add[]', 'w'],
      ['remove[]', 'y'],
    ]);
    const res = await fetch(`${B}/q/a/${id}/tags`, { method: 'POST', body: arrays });
    expect([res.status, await res.json()]).toEqual([200, ['ok', ['x', 'z', 'w']]]);
    const body = await fetch(`${B}/q/a/${id}/tags`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ x_format: 'json', add: ['x', 'j'], remove: 'w' }),
    });
    expect([body.status, await body.json()]).toEqual([200, ['ok', ['x', 'z', 'j']]]);
    expect((await message('a', id)).tags).toEqual(['x', 'z', 'j']);
    const history = (await (await fetch(`${B}/q/a/${id}/history.json`)).json()) as Record<string, unknown>[];
    expect(history.filter((l) => l.event === 'tags')).toEqual([
      expect.objectContaining({ actor: 'web:127.0.0.1', add: ['x', 'y'] }),
      expect.objectContaining({ actor: 'web:127.0.0.1', add: ['z', 'w'], remove: ['y'] }),
      expect.objectContaining({ actor: 'web:127.0.0.1', add: ['j'], remove: ['w'] }),
    ]);

    const done = await send(B, 'a', { param1: 'done' });
    await waitState(B, 'a', done, ['done']);
    expect(await tagJson('a', done, { add: 'late' })).toEqual([200, ['ok', ['late']]]);
    expect((await message('a', done)).tags).toEqual(['late']);
  });

  it('html: a flash with the new list and 303 to the message page (or back); a refusal is the classic text', async () => {
    const id = await queued('a');
    const res = await postForm(`${B}/q/a/${id}/tags`, { add: 'p,q' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${w.origin}/q/a/${id}`);
    const page = await (await fetch(res.headers.get('location')!, { headers: { cookie: cookiesOf(res) } })).text();
    expect(page).toMatch(/<div id="flash-notice"[^>]*>Tags updated: p, q</);
    const back = await postForm(`${B}/q/a/${id}/tags`, { remove: 'p', back: '/q/a' });
    expect([back.status, back.headers.get('location')]).toEqual([303, `${w.origin}/q/a`]);
    const none = await postForm(`${B}/q/a/20200101.0000.00.000.1/tags`, { add: 'p' });
    expect([none.status, await none.text()]).toEqual([404, '404 - Couldn\'t tag message. ["fail", "msg not found"].']);
    const empty = await postForm(`${B}/q/a/${id}/tags`, { add: '', remove: '' });
    expect([empty.status, await empty.text()]).toEqual([400, '400 - Couldn\'t tag message. ["fail", "lacking \'add or remove\' field"].']);
    const bad = await postForm(`${B}/q/a/${id}/tags`, { add: 'a b' });
    expect([bad.status, await bad.text()]).toEqual([400, `400 - add[0]: expected ${TAG_TEXT}, received "a b"`]);
    expect((await message('a', id)).tags).toEqual(['q']);
  });

  it('bad input is a 4xx naming the field, and changes nothing on disk', async () => {
    const id = await queued('b', { tags: 'keep' });
    const before = await spool();
    const msgBefore = await message('b', id);
    const refusals: [Record<string, string>, number, string][] = [
      [{ add: 'a b' }, 400, `add[0]: expected ${TAG_TEXT}, received "a b"`],
      [{ add: 'ok,-dash' }, 400, `add[1]: expected ${TAG_TEXT}, received "-dash"`],
      [{ remove: 'x/y' }, 400, `remove[0]: expected ${TAG_TEXT}, received "x/y"`],
      [{ add: Array.from({ length: 33 }, (_, i) => `t${i}`).join(',') }, 400, 'add: expected at most 32 tags, received 33'],
      [{}, 400, "lacking 'add or remove' field"],
    ];
    for (const [form, status, text] of refusals) {
      expect(await tagJson('b', id, form), JSON.stringify(form)).toEqual([status, ['fail', text]]);
    }
    const obj = await fetch(`${B}/q/b/${id}/tags`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ x_format: 'json', add: 42 }),
    });
    expect([obj.status, await obj.json()]).toEqual([400, ['fail', 'add: expected an array of tags or a comma-separated string, received 42']]);
    // 32 tags on the message at most, counting the ones it has.
    const many = Array.from({ length: 32 }, (_, i) => `m${i}`).join(',');
    expect(await tagJson('b', id, { add: many })).toEqual([400, ['fail', 'tags: expected at most 32 tags, received 33']]);
    expect(await tagJson('b', '20200101.0000.00.000.1', { add: 'k' })).toEqual([404, ['fail', 'msg not found']]);
    expect((await postForm(`${B}/q/b/not-an-id/tags`, { x_format: 'json', add: 'k' })).status).toBe(404);
    expect((await postForm(`${B}/q/nosuch/${id}/tags`, { x_format: 'json', add: 'k' })).status).toBe(404);
    // A cross-site form post never reaches the route.
    const cross = await postForm(`${B}/q/b/${id}/tags`, { add: 'k' }, { origin: 'http://evil.example' });
    expect(cross.status).toBe(403);
    expect(await spool()).toEqual(before);
    expect(await message('b', id)).toEqual(msgBefore);
  });
});

describe('one queue: GET /q/<q>/tags.json and /q/<q>/tags/<tag>.json', () => {
  it('counts per tag, a page newest tagging first, filtered by state; bad parameters are 400', async () => {
    const first = await queued('c', { tags: ['one', 'both'] });
    const second = await queued('c', { tags: 'both' });
    const done = await send(B, 'c', { param1: 'done', tags: 'both' });
    await waitState(B, 'c', done, ['done']);
    expect(await getJson('/q/c/tags.json')).toEqual([200, { one: 1, both: 3 }]);
    const [status, page] = await getJson('/q/c/tags/both.json');
    expect(status).toBe(200);
    expect(page.total).toBe(3);
    expect(page.messages.map((m: { msg_id: string }) => m.msg_id)).toEqual([done, second, first]);
    expect(page.messages[1]).toEqual({
      msg_id: second,
      state: 'que',
      status: 'que',
      due: expect.any(Number),
      priority: 0,
      tagged_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
    const [, queOnly] = await getJson('/q/c/tags/both.json?state=que&offset=1&limit=1');
    expect(queOnly.messages.map((m: { msg_id: string }) => m.msg_id)).toEqual([first]);
    expect(queOnly.total).toBe(2);
    expect(await getJson('/q/c/tags/nothing.json')).toEqual([200, { total: 0, messages: [] }]);

    const bad: [string, string][] = [
      ['/q/c/tags/a%20b.json', `tag: expected ${TAG_TEXT}, received "a b"`],
      ['/q/c/tags/-x.json', `tag: expected ${TAG_TEXT}, received "-x"`],
      ['/q/c/tags/both.json?state=gone', 'state: expected one of prep, que, run, done, relayed, err, received "gone"'],
      ['/q/c/tags/both.json?limit=0', 'limit: expected a whole number from 1 to 1000, received "0"'],
      ['/q/c/tags/both.json?limit=1001', 'limit: expected a whole number from 1 to 1000, received "1001"'],
      ['/q/c/tags/both.json?offset=-1', 'offset: expected a whole number from 0 to 10000000, received "-1"'],
      ['/q/c/tags/both.json?limit[]=1', 'limit: expected a whole number from 1 to 1000, received ["1"]'],
    ];
    for (const [p, text] of bad) expect(await getJson(p), p).toEqual([400, ['fail', text]]);
    expect((await fetch(`${B}/q/nosuch/tags.json`)).status).toBe(404);
    expect((await fetch(`${B}/q/nosuch/tags/both.json`)).status).toBe(404);
  });
});

describe('across queues: GET /tags/<tag>.json and /tracked.json', () => {
  it('merges every queue newest tagging first, with offset and limit over the merge', async () => {
    const ids: Record<string, string> = {};
    for (const key of ['a1', 'b1', 'c1', 'b2', 'a2', 'c2']) ids[key] = await queued(key[0]);
    for (const key of ['a1', 'b1', 'c1', 'b2', 'a2', 'c2']) await tagInOrder(key[0], ids[key], 'merge');
    const ref = (key: string) => ({ queue: key[0], msg_id: ids[key] });
    const [status, all] = await getJson('/tags/merge.json');
    expect(status).toBe(200);
    expect(all.total).toBe(6);
    expect(all.unavailable).toEqual([]);
    expect(all.messages.map((m: { queue: string; msg_id: string }) => ({ queue: m.queue, msg_id: m.msg_id }))).toEqual(
      ['c2', 'a2', 'b2', 'c1', 'b1', 'a1'].map(ref),
    );
    expect(all.messages[0]).toMatchObject({ state: 'que', status: 'que', priority: 0 });
    const [, window] = await getJson('/tags/merge.json?offset=2&limit=2');
    expect(window.messages.map((m: { queue: string; msg_id: string }) => ({ queue: m.queue, msg_id: m.msg_id }))).toEqual(['b2', 'c1'].map(ref));
    expect(window.total).toBe(6);
    // Every queue is asked for its first offset + limit messages, which it caps at 1000.
    expect(await getJson('/tags/merge.json?offset=990&limit=20')).toEqual([
      400,
      ['fail', 'offset: expected a whole number from 0 to 980 (offset + limit at most 1000 across queues), received "990"'],
    ]);
    expect(await getJson('/tags/a%3Cb.json')).toEqual([400, ['fail', `tag: expected ${TAG_TEXT}, received "a<b"`]]);
  });

  it("/tracked.json: tracked messages with live state, and the refs a lookup found deleted behind the queue's back", async () => {
    const waiting = await queued('b');
    const finished = await send(B, 'c', { param1: 'done' });
    await waitState(B, 'c', finished, ['done']);
    await tagInOrder('c', finished, 'track');
    // The message page's Track button posts add=track.
    expect((await postForm(`${B}/q/b/${waiting}/tags`, { add: 'track' })).status).toBe(303);
    const [, tracked] = await getJson('/tracked.json');
    expect(tracked).toEqual({
      messages: [
        expect.objectContaining({ queue: 'b', msg_id: waiting, state: 'que' }),
        expect.objectContaining({ queue: 'c', msg_id: finished, state: 'done' }),
      ],
      expired: [],
      total: 2,
      unavailable: [],
    });

    // The cleaner removes done directories without telling the queue: the next lookup reports it once.
    await fs.rm(path.join(w.root, (await message('c', finished)).path), { recursive: true });
    const [, after] = await getJson('/tracked.json');
    expect(after.messages.map((m: { msg_id: string }) => m.msg_id)).toEqual([waiting]);
    expect(after.expired).toEqual([`c/${finished}`]);
    expect((await getJson('/tracked.json'))[1].expired).toEqual([]);

    expect(await tagJson('b', waiting, { remove: 'track' })).toEqual([200, ['ok', []]]);
    expect((await getJson('/tracked.json'))[1]).toEqual({ messages: [], expired: [], total: 0, unavailable: [] });
  });

  it('a DOWN queue still answers; a queue that does not answer is left out and named in unavailable', async () => {
    const id = await queued('hung', { tags: 'spread,track' });
    const other = await queued('a', { tags: 'spread' });
    await w.mgr.cmd('down_queue', 'a');
    try {
      const [, down] = await getJson('/tags/spread.json');
      expect(down.messages.map((m: { msg_id: string }) => m.msg_id).sort()).toEqual([id, other].sort());
      // Changing tags is refused while DOWN (nothing is written), reading is not.
      expect(await tagJson('a', other, { add: 'more' })).toEqual([503, ['fail', 'status: DOWN']]);
    } finally {
      await w.mgr.cmd('up_queue', 'a');
    }
    const pid = await w.mgr.waitQueueUp('hung');
    process.kill(pid, 'SIGSTOP');
    try {
      const [status, without] = await getJson('/tags/spread.json');
      expect(status).toBe(200);
      expect(without).toEqual({ total: 1, messages: [expect.objectContaining({ queue: 'a', msg_id: other })], gone: [], unavailable: ['hung'] });
      expect((await getJson('/tracked.json'))[1]).toMatchObject({ messages: [], unavailable: ['hung'] });
      const page = await (await fetch(`${B}/tags/spread`)).text();
      expect(page).toContain('<p class="bad" id="tagged-unavailable">Not answering, left out: hung</p>');
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    expect((await getJson('/tags/spread.json'))[1].unavailable).toEqual([]);
  });
});
