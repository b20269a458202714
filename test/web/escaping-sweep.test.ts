// Every value the web echoes from a request comes back escaped in HTML, or in a non-HTML reply a
// browser will not sniff: query strings, form fields, flashes, redirect targets, path segments, headers.
import path from 'node:path';
import { VERBS_SH } from '../helpers/rq-root.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AttachedMessage, attachedDoneMessage, postMessage } from './message-fixture.js';
import { fillRoute, routeTable } from './route-table.js';
import { type WebRoot, cookiesOf, startWebRoot } from './web-root.js';

interface Payload {
  raw: string;
  /** What an escaping echo must contain: written out, not computed by the escaper under test. */
  escaped: string;
  /** What no markup may contain, not even next to an escaped copy elsewhere on the page. */
  forbidden: string[];
}

const PAYLOADS: Payload[] = [
  { raw: '<script>alert(1)</script>', escaped: '&lt;script&gt;alert(1)&lt;/script&gt;', forbidden: ['<script>alert'] },
  // `"'` unescaped is the break out of an attribute, even where < and > were escaped.
  { raw: `"'><img src=x onerror=1>`, escaped: '&quot;&#39;&gt;&lt;img src=x onerror=1&gt;', forbidden: ['<img src=x', `"'`] },
];

let w: WebRoot;
let done: AttachedMessage;
let prepId: string;

beforeAll(async () => {
  // relative_root: outside it the not-found handler echoes the path in its own, plain-text way.
  w = await startWebRoot({ config: { allow_new_queue: true, script_dirs: [path.dirname(VERBS_SH)], relative_root: '/rq/' } });
  done = await attachedDoneMessage(w.base, w.root, 'test');
  prepId = String((await postMessage(w.base, 'test', { dest: 'test', _method: 'prep' }))[1])
    .split('/')
    .pop()!;
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

const enc = encodeURIComponent;
const get = (p: string, headers: Record<string, string> = {}) => fetch(w.base + p, { headers, signal: AbortSignal.timeout(10_000) });
const post = (p: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(w.base + p, { method: 'POST', body: new URLSearchParams(form), headers, redirect: 'manual' });

/** The page a 303 leads to, with the flash cookie it set; the redirect must stay on this server. */
async function follow(res: Response): Promise<Response> {
  expect(res.status).toBe(303);
  const location = res.headers.get('location')!;
  expect(new URL(location).origin).toBe(w.origin);
  return fetch(location, { headers: { cookie: cookiesOf(res) } });
}

/** Types a browser runs script in. */
const MARKUP = /^(text\/html|image\/svg\+xml|application\/xhtml\+xml|(text|application)\/xml)/;

/** Markup: no raw payload and, where the value is echoed, its escaped form. Anything else: never sniffed into markup. */
async function expectSafe(res: Response, p: Payload, echoed: boolean, what: string): Promise<void> {
  const body = await res.text();
  const type = res.headers.get('content-type') ?? '';
  if (MARKUP.test(type)) {
    for (const bad of [p.raw, ...p.forbidden]) expect(body, what).not.toContain(bad);
    if (echoed) expect(body, `${what}: the echo (has the value stopped being shown? then mark the row echoed: false)`).toContain(p.escaped);
  } else {
    expect(res.headers.get('x-content-type-options'), what).toBe('nosniff');
    if (echoed) expect(body, `${what}: the echo`).toMatch(/alert\(1\)|onerror=1/);
  }
}

interface Echo {
  what: string;
  /** false: nothing shows this value today; the row keeps it that way or escaped. */
  echoed: boolean;
  send(p: string): Promise<Response>;
}

// Each row names the place in src/web that sends the value back.
const ECHOES: Echo[] = [
  // pages/queue-page.ts reads ?filter=; views/queue-view.ts shows it in the search box and the "Search:" note.
  { what: 'GET /q/<q>?filter=', echoed: true, send: (p) => get(`/q/test?filter=${enc(p)}`) },
  // api/status-api.ts doneJson: the limit error names the value.
  { what: 'GET /q/<q>/done.json?limit=', echoed: true, send: (p) => get(`/q/test/done.json?limit=${enc(p)}`) },
  // api/tail-events.ts startOffset: the offset error names the value, from the query or Last-Event-ID.
  { what: 'GET …/log/<file>/events?offset=', echoed: true, send: (p) => get(`/q/test/${done.id}/log/stdio.log/events?offset=${enc(p)}`) },
  { what: 'Last-Event-ID of …/log/<file>/events', echoed: true, send: (p) => get(`/q/test/${done.id}/log/stdio.log/events`, { 'last-event-id': p }) },
  // api/message-api.ts newMessage: with back, the queue's refusal (naming the value) is the error flash.
  {
    what: 'new_message html + back: mesg[max_count] in the error flash',
    echoed: true,
    send: async (p) => follow(await post('/q/test/new_message', { x_format: 'html', back: '/rq/q/test', 'mesg[dest]': 'test', 'mesg[max_count]': p })),
  },
  // views/forms-view.ts resultView: without back, the same refusal on the result page.
  {
    what: 'new_message html: mesg[max_count] on the result page',
    echoed: true,
    send: (p) => post('/q/test/new_message', { x_format: 'html', 'mesg[dest]': 'test', 'mesg[max_count]': p }),
  },
  // web/due-time.ts dueFromForm: a due_at or due_tz that is no time is named in the 400.
  {
    what: 'new_message: due_at that is no time',
    echoed: true,
    send: (p) => post('/q/test/new_message', { x_format: 'html', 'mesg[dest]': 'test', due_at: p }),
  },
  {
    what: 'new_message: due_tz that is no offset',
    echoed: true,
    send: (p) => post('/q/test/new_message', { x_format: 'html', 'mesg[dest]': 'test', due_at: '2030-01-01T00:00', due_tz: p }),
  },
  // api/message-api.ts messageFields: a mesg that is not JSON is named in the 400.
  { what: 'new_message: mesg that is not JSON', echoed: true, send: (p) => post('/q/test/new_message', { mesg: p }) },
  // urls.ts back → the 303's Location; the page it leads to shows no part of it.
  { what: 'ack_errs back', echoed: false, send: async (p) => follow(await post('/q/test/ack_errs', { back: `/rq/${p}` })) },
  // api/admin-api.ts weGot: new_queue's flash inspects every form field, names included; its Location
  // is /q/<name>, whose 404 page names the refused queue again (web-context.ts requireQueue).
  {
    what: 'new_queue: queue[name] and a field name in the flash',
    echoed: true,
    send: async (p) => follow(await post('/new_queue', { 'queue[name]': p, 'queue[script]': VERBS_SH, [p]: p })),
  },
  // web/script-dirs.ts: a script outside script_dirs is named in the 403 text.
  { what: 'new_queue: queue[script] outside script_dirs', echoed: true, send: (p) => post('/new_queue', { 'queue[name]': 'x', 'queue[script]': p }) },
  // api/admin-api.ts weGot: delete_queue's flash inspects queue_name (shown on the dashboard).
  { what: 'delete_queue: queue_name in the flash', echoed: true, send: async (p) => follow(await post('/delete_queue', { queue_name: p })) },
  // web/script-dirs.ts: a json_path outside script_dirs is named in the 403 text.
  { what: 'new_queue_link: queue[json_path] on the 404 page', echoed: true, send: (p) => post('/new_queue_link', { 'queue[json_path]': p }) },
  // api/attach-api.ts attachNew: a refused upload name comes back in the plain-text "Commit … got" reply.
  {
    what: 'attach/new html: the uploaded file name',
    echoed: true,
    send: (p) => {
      const fd = new FormData();
      // The multipart parser keeps only what follows the last '/' of a file name.
      fd.set('filedata', new Blob(['x']), `a${p.replaceAll('/', '')}`);
      return fetch(`${w.base}/q/test/${prepId}/attach/new`, { method: 'POST', body: fd, redirect: 'manual' });
    },
  },
  // api/attach-api.ts attachDelete: the name from the path, on the 404 page or in the "Delete of attach" text.
  { what: 'POST …/attach/<name> _method=delete', echoed: true, send: (p) => post(`/q/test/${prepId}/attach/${enc(p)}`, { _method: 'delete' }) },
  // api/message-api.ts messageAction → web-context.ts requireMsgId: the id from the path on the 404 page.
  { what: 'POST /q/<q>/<id>: the id', echoed: true, send: (p) => post(`/q/test/${enc(p)}`, { _method: 'delete' }) },
  // flash.ts take: the cookie is signed, so a forged one is dropped, never shown.
  { what: 'an unsigned rq_flash cookie', echoed: false, send: (p) => get('/', { cookie: `rq_flash=${enc(JSON.stringify({ k: 'notice', h: p }))}` }) },
  {
    what: 'an rq_flash cookie with a forged signature',
    echoed: false,
    send: (p) => get('/', { cookie: `rq_flash=${enc(`${JSON.stringify({ k: 'error', h: p })}.Zm9yZ2Vk`)}` }),
  },
  // web-context.ts requireQueue (through the 404 handler in app.ts): the queue name from the path.
  { what: 'GET /q/<q>', echoed: true, send: (p) => get(`/q/${enc(p)}`) },
  { what: 'GET /q/<q>/new_message', echoed: true, send: (p) => get(`/q/${enc(p)}/new_message`) },
  // web-context.ts requireMsgId: the id from the path.
  { what: 'GET /q/<q>/<id>', echoed: true, send: (p) => get(`/q/test/${enc(p)}`) },
  { what: 'GET /q/<q>/<id>.json', echoed: true, send: (p) => get(`/q/test/${enc(p)}.json`) },
  // message-files.ts requireFileName and send-file.ts sendFile: the file name from the path.
  { what: 'GET …/log/<file>', echoed: true, send: (p) => get(`/q/test/${done.id}/log/${enc(p)}`) },
  { what: 'GET …/attach/<name>', echoed: true, send: (p) => get(`/q/test/${done.id}/attach/${enc(p)}`) },
  // pages/tail-page.ts → views/tail-view.ts: the file name in the tail page's title (or the 404 page).
  { what: 'GET …/tailview/<name>', echoed: true, send: (p) => get(`/q/test/${done.id}/tailview/${enc(p)}`) },
  { what: 'GET …/tailviewlog/<file>', echoed: true, send: (p) => get(`/q/test/${done.id}/tailviewlog/${enc(p)}`) },
  // app.ts not-found handler: inside relative_root the page names nothing; outside it, the path as plain text.
  { what: 'GET an unknown path', echoed: false, send: (p) => get(`/${enc(p)}`) },
  { what: 'GET a path outside relative_root', echoed: true, send: (p) => fetch(`${w.origin}/elsewhere/${p}`) },
  // access-control.ts originProblem: the Origin of a refused cross-site POST is named in the 403 text.
  { what: 'Origin of a POST', echoed: true, send: (p) => post('/q/test/ack_errs', {}, { origin: p }) },
  // api/tag-api.ts → tag-lookup.ts requireTag: the tag from the path, in the 400 text (HTML view and JSON).
  { what: 'GET /tags/<tag>', echoed: true, send: (p) => get(`/tags/${enc(p)}`) },
  { what: 'GET /q/<q>/tags/<tag>.json', echoed: true, send: (p) => get(`/q/test/tags/${enc(p)}.json`) },
  // tag-lookup.ts tagListParam: a bad tag of add/remove is named in the 400.
  { what: 'POST …/<id>/tags add', echoed: true, send: (p) => post(`/q/test/${done.id}/tags`, { add: p }) },
  // api/tag-api.ts cancelTagged: the tag is named in the 400; the reason becomes the cancelled messages' status,
  // shown by views/tags-view.ts on the queue's tag view (where the html answer's back leads).
  { what: 'POST /q/<q>/cancel_tagged tag', echoed: true, send: (p) => post('/q/test/cancel_tagged', { tag: p }) },
  {
    what: 'cancel_tagged reason on the tag view',
    echoed: true,
    send: async (p) => {
      await postMessage(w.base, 'test', { dest: 'test', param1: 'done', due: Math.floor(Date.now() / 1000) + 3600, tags: 'escape' });
      return follow(await post('/q/test/cancel_tagged', { tag: 'escape', reason: p, back: '/rq/q/test/tags/escape' }));
    },
  },
  // api/depends-limits-api.ts undependParams → message/depends.ts readDepends: a bad ref is named in the 400 (text, or JSON).
  { what: 'POST …/<id>/undepend depends', echoed: true, send: (p) => post(`/q/test/${done.id}/undepend`, { depends: `test/${done.id},${p}` }) },
  { what: 'POST …/<id>/undepend depends (json)', echoed: true, send: (p) => post(`/q/test/${done.id}/undepend`, { x_format: 'json', depends: p }) },
  { what: 'POST …/<id>/undepend all', echoed: true, send: (p) => post(`/q/test/${done.id}/undepend`, { all: p }) },
  // limit-status.ts limitKeyParam: any text without control characters is a key; the JSON answer is never markup.
  { what: 'GET /limits.json?key=', echoed: false, send: (p) => get(`/limits.json?key=${enc(p)}`) },
  // stats-params.ts (the queue's dateArg and groupArg): a bad date or group is named in the 400, as JSON or text;
  // a group that is a valid name (no blank or colon) is shown on views/failed-view.ts groupView, or in the JSON page.
  { what: 'GET /q/<q>/stats.json?date=', echoed: true, send: (p) => get(`/q/test/stats.json?date=${enc(p)}`) },
  { what: 'GET /q/<q>/stats?date=', echoed: true, send: (p) => get(`/q/test/stats?date=${enc(p)}`) },
  { what: 'GET /q/<q>/failed.json?group=', echoed: true, send: (p) => get(`/q/test/failed.json?group=${enc(p)}`) },
  { what: 'GET /q/<q>/failed?group=', echoed: true, send: (p) => get(`/q/test/failed?group=${enc(p)}`) },
  // views/message-view.ts fieldValue: the limit key a message stores (a key is free text), on its page.
  {
    what: 'limit on the message page',
    echoed: true,
    send: async (p) => {
      const r = await postMessage(w.base, 'test', { dest: 'test', param1: 'done', due: Math.floor(Date.now() / 1000) + 3600, limit: p, limit_concurrency: 1 });
      return get(`/q/test/${String(r[1]).split('/').pop()}`);
    },
  },
  // views/message-view.ts fieldValue: what new_message stored, on the message page.
  {
    what: 'param1..4 and src on the message page',
    echoed: true,
    send: async (p) => {
      const r = await postMessage(w.base, 'test', { dest: 'test', param1: p, param2: p, param3: p, param4: p, src: p });
      return get(`/q/test/${String(r[1]).split('/').pop()}`);
    },
  },
];

describe('every echo of a request value is escaped', () => {
  it.each(ECHOES.flatMap((e) => PAYLOADS.map((p) => [e.what, p.raw, e, p] as const)))('%s carrying %s', async (_what, _raw, e, p) => {
    await expectSafe(await e.send(p.raw), p, e.echoed, e.what);
  });

  // Query parameters any page reads today, and one none does, on every GET route the app has.
  const QUERY = [
    'filter',
    'back',
    'limit',
    'offset',
    'state',
    'x_format',
    'embed',
    'q',
    'id',
    'name',
    'file',
    'tag',
    'key',
    'reason',
    'depends',
    'all',
    'date',
    'group',
    'unknown',
  ];
  it.each(PAYLOADS.map((p) => [p.raw, p] as const))('every GET route with every query parameter carrying %s', async (_raw, p) => {
    const routes = (await routeTable(w.root)).filter((r) => r.method === 'GET');
    const query = new URLSearchParams(QUERY.map((k) => [k, p.raw])).toString();
    for (const r of routes) {
      const url = `${w.origin}${fillRoute(r.pattern, { q: 'test', id: done.id, name: done.name, file: 'stdio.log', tag: 'swept' })}?${query}`;
      await expectSafe(await fetch(url, { signal: AbortSignal.timeout(10_000) }), p, false, `GET ${url}`);
    }
  });
});

describe('redirect targets', () => {
  // urls.ts back: a Location on this server, serialised as a URL (no CR/LF, nothing beyond ASCII, no
  // raw markup characters). Raw CR/LF or '€' here used to make the reply a 500 after the action ran.
  it.each([
    ['CR/LF', '/rq/q/test\r\nSet-Cookie: evil=1', '/rq/q/testSet-Cookie:%20evil=1'],
    ['a character beyond Latin-1', '/rq/q/€?x=€', '/rq/q/%E2%82%AC?x=%E2%82%AC'],
    ['markup', `/rq/q/"'><img src=x onerror=1>`, `/rq/q/%22'%3E%3Cimg%20src=x%20onerror=1%3E`],
    ['a plain path', '/rq/q/test?filter=a#top', '/rq/q/test?filter=a#top'],
  ])('back with %s', async (_what, back, location) => {
    const res = await post('/q/test/ack_errs', { back });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(w.origin + location);
    expect(res.headers.getSetCookie().map((c) => c.split('=')[0])).toEqual(['rq_flash']);
  });
});
