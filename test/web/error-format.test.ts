// Every refusal in the client's format, against a real rq-mgr + web: ["fail", text] to a JSON client (a .json URL, a JSON body, Accept, x_format=json), the classic text or Not Found page to the others.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WebRoot, send, startWebRoot, waitState } from './web-root.js';

let w: WebRoot;
let B: string;
let done: string;

beforeAll(async () => {
  w = await startWebRoot({ queues: { test: {} } });
  B = w.base;
  done = await send(B, 'test', { param1: 'done' });
  await waitState(B, 'test', done, ['done']);
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

const ACCEPT_JSON = { accept: 'application/json' };
const JSON_BODY = { 'content-type': 'application/json' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

interface Case {
  what: string;
  path: string;
  init?: RequestInit;
  status: number;
  /** The JSON client's ["fail", text] (a RegExp for texts that carry a path or a position). */
  json?: string | RegExp;
  /** The classic client's answer: the Not Found page, or this text. */
  classic?: 'page' | string;
}

const UNSUPPORTED_TEXT =
  'request body: its content type text/plain is not accepted; send a form (application/x-www-form-urlencoded), JSON (application/json) or multipart/form-data';

/** Each refusal as a JSON client and as a classic client send it; `json` and `classic` say what each gets. */
const CASES: [json: Case, classic: Case | null][] = [
  [
    { what: 'a .json URL of a missing queue', path: '/q/nosuchq.json', status: 404, json: 'Queue not found: nosuchq' },
    { what: 'the page of a missing queue', path: '/q/nosuchq', status: 404, classic: 'page' },
  ],
  [
    {
      what: 'a JSON create to a missing queue',
      path: '/q/missing/new_message',
      init: { method: 'POST', headers: JSON_BODY, body: '{"dest":"missing"}' },
      status: 404,
      json: 'Queue not found: missing',
    },
    {
      what: 'a form create to a missing queue',
      path: '/q/missing/new_message',
      init: { method: 'POST', headers: FORM, body: 'mesg={"dest":"missing"}' },
      status: 404,
      classic: 'page',
    },
  ],
  [
    {
      what: 'an Accept: application/json page of a missing queue',
      path: '/q/nosuchq',
      init: { headers: ACCEPT_JSON },
      status: 404,
      json: 'Queue not found: nosuchq',
    },
    null,
  ],
  [
    {
      what: 'x_format=json to a missing message',
      path: `/q/test/20260101.0000.00.000.1?x_format=json`,
      init: { method: 'POST', headers: FORM, body: '_method=delete' },
      status: 404,
      json: 'msg not found',
    },
    {
      what: 'a delete of a missing message from a page',
      path: `/q/test/20260101.0000.00.000.1`,
      init: { method: 'POST', headers: FORM, body: '_method=delete' },
      status: 303,
    },
  ],
  [
    { what: "fastify's 404, asked for JSON", path: '/no/such/route', init: { headers: ACCEPT_JSON }, status: 404, json: 'Not Found: /no/such/route' },
    { what: "fastify's 404", path: '/no/such/route', status: 404, classic: 'page' },
  ],
  [
    {
      what: 'a missing message id as .json',
      path: '/q/test/20260101.0000.00.000.1.json',
      status: 404,
      json: /^Message not found: test\/20260101\.0000\.00\.000\.1 /,
    },
    { what: 'a missing message page', path: '/q/test/20260101.0000.00.000.1', status: 404, classic: 'page' },
  ],
  [
    {
      what: 'run_now of a done message, asked for JSON',
      path: '',
      init: { method: 'POST', headers: { ...FORM, ...ACCEPT_JSON }, body: '' },
      status: 409,
      json: 'msg not in runnable state',
    },
    {
      what: 'run_now of a done message',
      path: '',
      init: { method: 'POST', headers: FORM, body: '' },
      status: 409,
      classic: `409 - Couldn't run message. ["fail", "msg not in runnable state"].`,
    },
  ],
  [
    {
      what: 'adminoper without an action, asked for JSON',
      path: '/q/test/adminoper?x_format=json',
      init: { method: 'POST', headers: FORM, body: 'back=/' },
      status: 400,
      json: 'Invalid adminoper param: expected one of pause, resume, down, up, received none of them',
    },
    {
      what: 'adminoper without an action',
      path: '/q/test/adminoper',
      init: { method: 'POST', headers: FORM, body: 'back=/' },
      status: 400,
      classic: '400 - Invalid adminoper param: expected one of pause, resume, down, up, received none of them',
    },
  ],
  [
    {
      what: 'new_queue while creation is off, asked for JSON',
      path: '/new_queue',
      init: { method: 'POST', headers: { ...FORM, ...ACCEPT_JSON }, body: 'queue[name]=x' },
      status: 403,
      json: 'Queue creation not allowed at this time.',
    },
    {
      what: 'new_queue while creation is off',
      path: '/new_queue',
      init: { method: 'POST', headers: FORM, body: 'queue[name]=x' },
      status: 403,
      classic: 'Queue creation not allowed at this time.',
    },
  ],
  [
    {
      what: "fastify's 400: a JSON body that does not parse",
      path: '/q/test/new_message',
      init: { method: 'POST', headers: JSON_BODY, body: '{\n  "dest": "test",\n  "param1": }' },
      status: 400,
      json: 'request body: expected valid JSON, received a syntax error at line 3 column 13 (byte 32): Unexpected token }',
    },
    null,
  ],
  [
    {
      what: 'an empty JSON body',
      path: '/q/test/new_message',
      init: { method: 'POST', headers: JSON_BODY, body: '' },
      status: 400,
      json: 'request body: expected a JSON value (Content-Type is application/json), received an empty body',
    },
    null,
  ],
  [
    {
      what: 'a prototype-poisoning JSON body',
      path: '/q/test/new_message',
      init: { method: 'POST', headers: JSON_BODY, body: '{"dest":"test","__proto__":{"x":1}}' },
      status: 400,
      json: /^request body: expected JSON without a "__proto__"/,
    },
    null,
  ],
  [
    {
      what: 'a JSON-lines batch with a broken line',
      path: '/q/test/new_messages',
      init: { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: '{"param1":"x"}\n{"param1": nope}\n' },
      status: 400,
      json: 'request body: expected one JSON object per line, received a syntax error at line 2 column 13 (byte 27): Unexpected token o',
    },
    null,
  ],
  [
    {
      what: 'a JSON body whose bytes are not UTF-8 (never read as U+FFFD)',
      path: '/q/test/new_message',
      init: {
        method: 'POST',
        headers: JSON_BODY,
        body: Buffer.concat([Buffer.from('{"dest":"test","param1":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
      },
      status: 400,
      json: 'request body: expected UTF-8 text, received bytes that are not UTF-8',
    },
    null,
  ],
  [
    {
      what: 'a JSON-lines batch whose bytes are not UTF-8',
      path: '/q/test/new_messages',
      init: {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson' },
        body: Buffer.concat([Buffer.from('{"param1":"'), Buffer.from([0xc3]), Buffer.from('"}\n')]),
      },
      status: 400,
      json: 'request body: expected UTF-8 text, received bytes that are not UTF-8',
    },
    null,
  ],
  [
    {
      what: 'a form field whose %-escapes are not UTF-8 (the body unread, Accept says JSON)',
      path: '/q/test/new_message',
      init: {
        method: 'POST',
        headers: { ...FORM, ...ACCEPT_JSON },
        body: `x_format=json&mesg=${encodeURIComponent('{"dest":"test","param1":"')}%FF%FE${encodeURIComponent('"}')}`,
      },
      status: 400,
      json: 'mesg: expected UTF-8 text (each %-escape a byte of a UTF-8 sequence), received 2 byte sequences that are not UTF-8',
    },
    null,
  ],
  [
    {
      what: 'a mesg text that does not parse',
      path: '/q/test/new_message',
      init: { method: 'POST', headers: FORM, body: new URLSearchParams({ x_format: 'json', mesg: '{"dest":"test",}' }).toString() },
      status: 400,
      json: 'mesg: expected a JSON object text such as {"dest":"test"}, received "{\\"dest\\":\\"test\\",}", a syntax error at line 1 column 16 (byte 15): Unexpected token }',
    },
    null,
  ],
  [
    {
      what: 'a text/plain body to new_message (the default format is JSON)',
      path: '/q/test/new_message',
      init: { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'dest=test' },
      status: 415,
      json: UNSUPPORTED_TEXT,
    },
    {
      what: 'a text/plain body to new_message with x_format=html',
      path: '/q/test/new_message?x_format=html',
      init: { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'dest=test' },
      status: 415,
      classic: `415 - ${UNSUPPORTED_TEXT}`,
    },
  ],
];

async function ask(c: Case): Promise<Response> {
  const path = c.path === '' ? `/q/test/${done}/run_now` : c.path;
  return fetch(B + path, { redirect: 'manual', ...c.init });
}

describe('refusals in the client format', () => {
  it.each(CASES.map(([j]) => [j.what, j] as const))('JSON client: %s', async (_what, c) => {
    const res = await ask(c);
    expect(res.status).toBe(c.status);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = (await res.json()) as [string, string];
    expect(body[0]).toBe('fail');
    if (c.json instanceof RegExp) expect(body[1]).toMatch(c.json);
    else expect(body).toEqual(['fail', c.json]);
  });

  it.each(CASES.filter(([, k]) => k !== null).map(([, k]) => [k!.what, k!] as const))('classic client: %s', async (_what, c) => {
    const res = await ask(c);
    expect(res.status).toBe(c.status);
    if (c.classic === 'page') {
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await res.text()).toContain('<h2 id="not-found">Not Found</h2>');
    } else if (c.classic !== undefined) {
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await res.text()).toBe(c.classic);
    }
  });

  it('a classic client that sends another content type with its message in the query string is still served', async () => {
    const res = await fetch(`${B}/q/test/new_message?${new URLSearchParams({ mesg: JSON.stringify({ dest: 'test', param1: 'done' }) })}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'ignored',
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as string[])[0]).toBe('ok');
  });

  it('x_format=html in the body keeps the classic text though Accept names JSON; a .txt URL stays text', async () => {
    const res = await fetch(`${B}/q/test/${done}`, { method: 'POST', headers: { ...FORM, ...ACCEPT_JSON }, body: 'x_format=html&_method=later' });
    expect([res.status, res.headers.get('content-type'), await res.text()]).toEqual([400, 'text/plain; charset=utf-8', '400 - Invalid method param']);
    const txt = await fetch(`${B}/q/nosuchq.txt`, { headers: ACCEPT_JSON });
    expect(txt.status).toBe(404);
    expect(txt.headers.get('content-type')).toMatch(/^text\/html/);
  });
});
