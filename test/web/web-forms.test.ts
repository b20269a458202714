// Forms over HTTP against real rq-mgr, web and queue processes: Post/Redirect/Get for browser forms (classic clients keep their replies), the new-message form's due time and attachments, and progress lines on GET /events and the tail.
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dueFromForm } from '../../src/web/due-time.js';
import { PROJECT } from '../helpers/rq-root.js';
import { SseReader } from '../helpers/sse-reader.js';
import { type WebRoot, cookiesOf, postForm, send, startWebRoot, waitState } from './web-root.js';

const PROGRESS_SH = path.join(PROJECT, 'test', 'browser', 'fixtures', 'browser.sh');
let w: WebRoot;
let B: string;

beforeAll(async () => {
  w = await startWebRoot({ queues: { test: {}, steps: { script: PROGRESS_SH } } });
  B = w.base;
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

/** What a browser sends with a form it submits from a page of this server. */
const browser = (page: string) => ({
  'sec-fetch-mode': 'navigate',
  accept: 'text/html,application/xhtml+xml',
  referer: `${w.origin}${page}`,
  origin: w.origin,
});

/** A urlencoded POST through node:http: fetch (undici) sets Sec-Fetch-Mode itself, as a script's fetch does, so it cannot pose as a form. */
function formPost(url: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return new Promise((resolve, reject) => {
    const body = new URLSearchParams(form).toString();
    const req = http.request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) for (const one of Array.isArray(v) ? v : [v]) if (one !== undefined) h.append(k, String(one));
          resolve(new Response(res.statusCode === 303 ? null : Buffer.concat(chunks), { status: res.statusCode, headers: h }));
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
const flashOn = async (res: Response): Promise<string> =>
  (await (await fetch(res.headers.get('location')!, { headers: { cookie: cookiesOf(res) } })).text()).match(/id="flash-(?:notice|error)"[^>]*>([^<]*)/)?.[1] ??
  '';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const message = async (q: string, id: string): Promise<any> => (await fetch(`${B}/q/${q}/${id}.json`)).json();

describe('Post/Redirect/Get', () => {
  it('a refused browser form goes back to its page with the refusal as a flash; other clients keep the classic text and status', async () => {
    const id = await send(B, 'test', { param1: 'done' });
    await waitState(B, 'test', id, ['done']);
    const page = `/q/test/${id}`;
    const res = await formPost(`${B}${page}/run_now`, {}, browser(page));
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${w.origin}${page}`);
    expect(await flashOn(res)).toBe('409 - Couldn&#39;t run message. [&quot;fail&quot;, &quot;msg not in runnable state&quot;].');

    const classic = await postForm(`${B}${page}/run_now`, {});
    expect(classic.status).toBe(409);
    expect(await classic.text()).toBe('409 - Couldn\'t run message. ["fail", "msg not in runnable state"].');
    // A Referer of another site is no page to go back to.
    const foreign = await formPost(`${B}${page}/run_now`, {}, { ...browser(page), referer: 'http://evil.example/x' });
    expect(foreign.status).toBe(409);
    // A thrown validation error is a refusal too.
    const bad = await formPost(
      `${B}/q/test/new_message`,
      { x_format: 'html', 'mesg[dest]': 'test', 'mesg[param1]': 'x', due_at: 'soon' },
      browser('/q/test/new_message'),
    );
    expect(bad.status).toBe(303);
    expect(bad.headers.get('location')).toBe(`${w.origin}/q/test/new_message`);
    expect(await flashOn(bad)).toMatch(/^400 - due_at: expected a date and time such as 2026-11-21T20:00/);
  });

  it("a page's background look between the 303 and the page it leads to neither shows nor eats the flash", async () => {
    const page = '/q/test';
    const res = await formPost(`${B}${page}/adminoper`, { pause: 'Pause' }, browser(page));
    expect(res.status).toBe(303);
    const cookie = cookiesOf(res);
    // What live.js sends from the open page: a browser's fetch() says Sec-Fetch-Dest: empty.
    const look = await fetch(`${B}${page}`, { headers: { cookie, accept: 'text/html', 'sec-fetch-dest': 'empty' } });
    expect(await look.text()).not.toContain('id="flash-');
    expect(look.headers.getSetCookie()).toEqual([]);
    expect(await flashOn(res)).toBe('Queue test paused');
    await formPost(`${B}${page}/adminoper`, { resume: 'Resume' }, browser(page));
  });

  it('the new-message form lands on the new message; a classic html client still gets the result page', async () => {
    const res = await formPost(
      `${B}/q/test/new_message`,
      { x_format: 'html', 'mesg[dest]': 'test', 'mesg[param1]': 'done', 'mesg[_method]': 'prep' },
      browser('/q/test/new_message'),
    );
    expect(res.status).toBe(303);
    const to = new URL(res.headers.get('location')!);
    expect(to.pathname).toMatch(/^\/q\/test\/\d{8}\.\d{4}\.\d{2}\.\d{3}\.\d+$/);
    expect(await flashOn(res)).toMatch(/^Created message http:\/\/.+\/q\/test\//);
    expect((await message('test', to.pathname.split('/').pop()!)).state).toBe('prep');

    const classic = await formPost(`${B}/q/test/new_message`, { x_format: 'html', 'mesg[dest]': 'test', 'mesg[param1]': 'done', 'mesg[_method]': 'prep' });
    expect(classic.status).toBe(200);
    expect(await classic.text()).toContain('<h1>New Message Result</h1>');
  });
});

describe('due time and attachments on new_message', () => {
  it('due_at with the browser offset is the due epoch; a bad one is a 400 naming the field', async () => {
    const res = await postForm(`${B}/q/test/new_message`, {
      x_format: 'json',
      mesg: JSON.stringify({ dest: 'test', param1: 'done' }),
      due_at: '2036-11-21T20:00',
      due_tz: '-60',
    });
    const [ok, full] = (await res.json()) as [string, string];
    expect(ok).toBe('ok');
    expect((await message('test', full.split('/').pop()!)).due).toBe(Date.UTC(2036, 10, 21, 19, 0) / 1000);
    for (const [field, body] of [
      ['due_at', { due_at: '2036-02-30T10:00' }],
      ['due_at', { due_at: 'tomorrow' }],
      ['due_tz', { due_at: '2036-11-21T20:00', due_tz: '900' }],
    ] as const) {
      const r = await postForm(`${B}/q/test/new_message`, { x_format: 'json', mesg: '{"dest":"test"}', ...body });
      expect(r.status).toBe(400);
      expect(((await r.json()) as string[])[1]).toMatch(new RegExp(`^${field}: expected `));
    }
  });

  it('dueFromForm: seconds optional, UTC without an offset, empty is none', () => {
    expect(dueFromForm(undefined, undefined)).toBeUndefined();
    expect(dueFromForm(' ', '-60')).toBeUndefined();
    expect(dueFromForm('2030-01-02T03:04', undefined)).toBe(Date.UTC(2030, 0, 2, 3, 4) / 1000);
    expect(dueFromForm('2030-01-02T03:04:05', '120')).toBe(Date.UTC(2030, 0, 2, 5, 4, 5) / 1000);
    expect(() => dueFromForm('2030-01-02T24:00', undefined)).toThrow(/^due_at: /);
    expect(() => dueFromForm('1969-12-31T23:59', undefined)).toThrow(/^due_at: /);
  });

  it('multipart files are attached before the message is queued; a refused file leaves nothing behind', async () => {
    const form = (mode: string, files: [string, string][]) => {
      const f = new FormData();
      f.set('x_format', 'json');
      f.set('mesg', JSON.stringify({ dest: 'test', param1: 'done', _method: mode, due: Math.floor(Date.now() / 1000) + 3600 }));
      for (const [name, text] of files) f.append('filedata', new Blob([text]), name);
      return f;
    };
    const post = async (f: FormData) => {
      const r = await fetch(`${B}/q/test/new_message`, { method: 'POST', body: f });
      return { status: r.status, body: (await r.json()) as [string, string] };
    };
    const made = await post(
      form('commit', [
        ['a.txt', 'alpha'],
        ['b.txt', 'beta'],
      ]),
    );
    expect(made.body[0]).toBe('ok');
    const m = await message('test', made.body[1].split('/').pop()!);
    expect(m.state).toBe('que');
    expect(Object.keys(m._attachments).sort()).toEqual(['a.txt', 'b.txt']);
    expect(m._attachments['a.txt'].size).toBe(5);

    const prep = await post(form('prep', [['c.txt', 'gamma']]));
    expect((await message('test', prep.body[1].split('/').pop()!)).state).toBe('prep');

    const before = (await (await fetch(`${B}/q/test.json`)).json()).prep_size;
    const dot = await post(form('commit', [['.profile', 'x']]));
    expect(dot.status).toBe(400);
    expect(dot.body[1]).toMatch(/^attachment \.profile: /);
    const single = await post(form('single_que', [['d.txt', 'x']]));
    expect(single.status).toBe(400);
    expect(single.body[1]).toMatch(/^filedata: expected attachments with the mode 'commit' or 'prep'/);
    // Two files of one name: the second would replace the first. Bytes without a name would be dropped.
    const twice = await post(
      form('commit', [
        ['same.txt', 'one'],
        ['same.txt', 'two'],
      ]),
    );
    expect([twice.status, twice.body[1]]).toEqual([400, 'filedata: expected files of different names, received 2 files named "same.txt"']);
    const nameless = await post(form('commit', [['', 'abc']]));
    expect([nameless.status, nameless.body[1]]).toEqual([
      400,
      'filedata: expected a file name for every file sent, received 3 bytes in a part of no file name',
    ]);
    expect((await (await fetch(`${B}/q/test.json`)).json()).prep_size).toBe(before);
    // A file input left empty (no name, no bytes) is no file: the message is made without one.
    const none = await post(form('prep', [['', '']]));
    expect(none.body[0]).toBe('ok');
    expect((await message('test', none.body[1].split('/').pop()!))._attachments ?? {}).toEqual({});
  });
});

describe('progress lines', () => {
  it('reach GET /events as `progress` events and the tail as `state` events, between the start and the end of the run', async () => {
    const gate = path.join(w.root, 'gate-progress');
    const events = await SseReader.open(`${B}/events?queue=steps`);
    await events.until('ready');
    const id = await send(B, 'steps', { param1: 'progress', param2: gate });
    const tail = await SseReader.open(`${B}/q/steps/${id}/log/stdio.log/events`);
    const seen: string[] = [];
    const tailSeen: string[] = [];
    for (const step of [1, 2, 3]) {
      const want = `run - step ${step} of 3`;
      for (;;) {
        const ev = (await events.next())!;
        const data = JSON.parse(ev.data);
        if (data.msg_id !== id) continue;
        seen.push(data.type === 'progress' ? data.status : data.type);
        if (data.type === 'progress' && data.status === want) break;
      }
      for (;;) {
        const ev = (await tail.next())!;
        if (ev.event !== 'state') continue;
        tailSeen.push(JSON.parse(ev.data).status);
        if (JSON.parse(ev.data).status === want) break;
      }
      await fs.writeFile(`${gate}.${step}`, '');
    }
    expect(seen.filter((s) => s.startsWith('run - '))).toEqual(['run - step 1 of 3', 'run - step 2 of 3', 'run - step 3 of 3']);
    expect(tailSeen.slice(-3)).toEqual(['run - step 1 of 3', 'run - step 2 of 3', 'run - step 3 of 3']);
    // The completion line is no progress: the run's end is told by its moves and `finished`.
    const rest: string[] = [];
    for (;;) {
      const data = JSON.parse((await events.next())!.data);
      if (data.msg_id !== id) continue;
      rest.push(data.type === 'moved' ? `moved:${data.to}` : data.type);
      if (data.type === 'finished') break;
    }
    expect(rest).toEqual(['moved:done', 'finished']);
    events.cancel();
    tail.cancel();
  });
});
