// Attacker's view of request bodies: malformed multipart on every route that reads one, limits pushed past, uploads to messages that do not exist; each a 4xx naming the fault, nothing changed, nothing stored, the web still serving others.
import fs from 'node:fs/promises';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WebRoot, send, startWebRoot } from '../web/web-root.js';
import { waitFor } from '../helpers/rq-root.js';
import { messageIds, rawRequest, supervisedPids } from './fuzz-helpers.js';
import { DRAIN_BOUNDS } from '../../src/web/bounded-drain.js';

const B = 'hostileBoundary42';
const MULTIPART = `multipart/form-data; boundary=${B}`;
/** max_body_bytes of this root: text fields together past it are refused by that name. */
const BODY_LIMIT = 1 << 20;

let w: WebRoot;
let uploads: string;
let prep: string;
let failed: string;
let pids: Record<string, number | null>;

beforeAll(async () => {
  w = await startWebRoot({
    queues: { test: {}, other: {} },
    config: { max_body_bytes: BODY_LIMIT },
    // Its own upload dir (on the root's filesystem, so it is the one chosen): what lands there is this test's.
    setup: async (root) => {
      await fs.mkdir(path.join(root, 'uploads'));
      return { tmpdir: path.join(root, 'uploads') };
    },
  });
  uploads = path.join(w.root, 'uploads');
  prep = await send(w.base, 'test', { _method: 'prep', param1: 'kept' });
  failed = await send(w.base, 'test', { param1: 'err' });
  await waitFor(async () => (await fetch(`${w.base}/q/test/${failed}/state.json`).then((r) => r.json()))[0] === 'err', 'the err message');
  pids = await supervisedPids(w.root);
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

const part = (name: string | null, value: string, filename?: string) =>
  `--${B}\r\nContent-Disposition: form-data${name === null ? '' : `; name="${name}"`}${filename === undefined ? '' : `; filename="${filename}"`}\r\n\r\n${value}\r\n`;
const end = `--${B}--\r\n`;

/** Each malformed body, what it does wrong, and the text its refusal must name. */
const BODIES: { what: string; body: string | Buffer; type?: string; status: number; names: RegExp }[] = [
  {
    what: 'a missing closing boundary',
    body: part('op', 'retry') + `--${B}\r\nContent-Disposition: form-data; name="a"\r\n\r\nnever ends`,
    status: 400,
    names: /expected a well-formed multipart\/form-data body, received one that does not parse \(Unexpected end of multipart data\)/,
  },
  {
    what: 'a part without headers',
    body: part('op', 'retry') + `--${B}\r\n\r\nheaderless\r\n` + end,
    status: 400,
    names: /expected a Content-Disposition: form-data header naming every multipart part, received 1 of 2 parts without one/,
  },
  {
    what: 'a part whose Content-Disposition has no name',
    body: part(null, 'v') + end,
    status: 400,
    names: /expected a name in the Content-Disposition of every multipart part, received part 1 without one/,
  },
  {
    // The parser skips such a part; more of it than the parser buffers (16 KB), read with the body's end, once stalled the parser for good.
    what: 'a 40 KB file part whose name holds a bare CR',
    body: part('op', 'retry') + part('a\rb', 'x'.repeat(40_000), 'f.bin') + end,
    status: 400,
    names: /expected a Content-Disposition: form-data header naming every multipart part, received 1 of 2 parts without one/,
  },
  {
    what: 'a boundary in the Content-Type that never appears',
    body: part('op', 'retry') + end,
    type: 'multipart/form-data; boundary=neverSent',
    status: 400,
    names: /expected a well-formed multipart\/form-data body, received one that does not parse/,
  },
  {
    what: 'a multipart Content-Type without a boundary',
    body: part('op', 'retry') + end,
    type: 'multipart/form-data',
    status: 400,
    names: /Boundary not found/,
  },
  {
    what: '100,000 tiny fields (3 MB)',
    body: Array.from({ length: 100_000 }, (_, i) => part(`f${i % 10}`, '')).join('') + end,
    status: 413,
    names: /expected at most 1000 parts \(text fields and files together\) in a multipart\/form-data body, received more/,
  },
  {
    what: 'text fields past max_body_bytes together',
    body: part('a', 'x'.repeat(700_000)) + part('b', 'x'.repeat(700_000)) + end,
    status: 413,
    names: new RegExp(`text fields of at most ${BODY_LIMIT} bytes together \\(max_body_bytes in config/config.json\\)`),
  },
];

const routes = () => [`/q/test/new_message`, `/q/test/${prep}/attach/new`, `/q/test/adminoper`, `/q/test/bulk`, `/q/test/${prep}/tags`, `/q/test/requeue_errs`];

/** What an accepted hostile request would have changed: the messages, where the err one is, the queue's state, the prep message's tags and files. */
async function snapshot() {
  const prepJson = (await (await fetch(`${w.base}/q/test/${prep}.json`)).json()) as Record<string, unknown>;
  return {
    ids: await messageIds(w.root, 'test'),
    err: (await (await fetch(`${w.base}/q/test/${failed}/state.json`)).json()) as string[],
    status: (await w.mgr.q('test', 'status'))[0],
    tags: prepJson.tags ?? [],
    attachments: Object.keys((prepJson._attachments as object) ?? {}),
  };
}

/** The web's error-level log lines (a request that failed, rather than one refused). */
async function errorLines(): Promise<string[]> {
  const log = await fs.readFile(path.join(w.root, 'log', 'mgr-test.log'), 'utf8');
  return log.split('\n').filter((l) => l.includes('"name":"rq-web"') && /"level":(50|60)/.test(l));
}

describe('malformed multipart bodies', () => {
  it('every route that reads a body answers each with a 4xx naming the fault, in text, and nothing changes', async () => {
    const before = await snapshot();
    // Another client keeps sending messages (to another queue) the whole time: it is served throughout.
    let others = 0;
    let stop = false;
    const other = (async () => {
      while (!stop) {
        await send(w.base, 'other', { param1: 'done' }).then(() => (others += 1));
      }
    })();
    for (const route of routes()) {
      for (const b of BODIES) {
        const res = await rawRequest(w.port, 'POST', route, { 'content-type': b.type ?? MULTIPART }, b.body);
        expect([route, b.what, res.status], res.body.slice(0, 300)).toEqual([route, b.what, b.status]);
        expect(res.body, `${route}: ${b.what}`).toMatch(new RegExp(`^${b.status} - request body: `));
        expect(res.body, `${route}: ${b.what}`).toMatch(b.names);
      }
    }
    stop = true;
    await other;
    expect(others).toBeGreaterThan(0);
    expect(await snapshot()).toEqual(before);
    expect(await errorLines()).toEqual([]);
    expect(await supervisedPids(w.root)).toEqual(pids);
  }, 120_000);

  it('answers JSON to a client that asked for it: Accept: application/json, x_format=json in the query, or an x_format=json field ahead of the fault', async () => {
    const cut = part('op', 'retry') + `--${B}\r\nContent-Disposition: form-data; name="a"\r\n\r\nnever ends`;
    const asks: [string, Record<string, string>, string][] = [
      ['Accept', { accept: 'application/json' }, cut],
      ['query', {}, cut],
      ['field', {}, part('x_format', 'json') + cut],
    ];
    for (const route of routes()) {
      for (const [how, headers, body] of asks) {
        const res = await rawRequest(w.port, 'POST', how === 'query' ? `${route}?x_format=json` : route, { 'content-type': MULTIPART, ...headers }, body);
        expect([route, how, res.status], res.body).toEqual([route, how, 400]);
        const [head, text] = JSON.parse(res.body) as [string, string];
        expect([head, text]).toEqual(['fail', expect.stringMatching(/^request body: expected a well-formed multipart\/form-data body/)]);
      }
    }
    const tooMany = BODIES.find((b) => b.what.startsWith('100,000 tiny fields'))!;
    const many = await rawRequest(w.port, 'POST', '/q/test/bulk', { 'content-type': MULTIPART, accept: 'application/json' }, tooMany.body);
    expect([many.status, JSON.parse(many.body)]).toEqual([413, ['fail', expect.stringMatching(/expected at most 1000 parts/)]]);
  });
});

/** What a client still sending does once its answer is in: stop there, send the rest of its body and then a GET on the same connection, or send on until the server cuts it. */
type After = 'stop' | 'rest' | 'past';

/**
 * Sends `head` (a request head whose Content-Length is `length`) and `first` of its body over a plain
 * socket, and reads the answer; then does `after`: `next` is the status of the GET on the same
 * connection, `more` how much was sent after the answer, `cut` how the connection ended if it did.
 */
function earlyAnswer(
  head: string,
  first: Buffer,
  length: number,
  after: After,
): Promise<{ status: number; body: string; more: number; next?: number; cut?: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port: w.port, host: '127.0.0.1' });
    const cut = new Promise<string>((r) => socket.once('error', (e: NodeJS.ErrnoException) => r(String(e.code))));
    socket.once('close', () => reject(new Error('closed before an answer')));
    let text = '';
    const answered = () => {
      const [h, body] = text.split('\r\n\r\n', 2);
      return body !== undefined && body.length >= Number(/content-length: (\d+)/i.exec(h)?.[1]) ? { status: Number(h.split(' ')[1]), body } : null;
    };
    socket.on('data', async function answer(d: Buffer) {
      text += d.toString('latin1');
      const a = answered();
      if (!a) return;
      socket.off('data', answer);
      const r = { ...a, more: 0 };
      if (after === 'stop') return void (resolve(r), socket.destroy());
      const MiB = Buffer.alloc(1 << 20);
      const end = after === 'rest' ? length - first.length : Infinity;
      while (!socket.destroyed && r.more < end) {
        const chunk = MiB.subarray(0, Math.min(MiB.length, end - r.more));
        r.more += chunk.length;
        if (!socket.write(chunk)) await Promise.race([once(socket, 'drain'), cut]);
      }
      if (after === 'past') return resolve({ ...r, cut: await cut });
      text = '';
      socket.on('data', (more: Buffer) => {
        text += more.toString('latin1');
        const g = answered();
        if (!g) return;
        resolve({ ...r, next: g.status });
        socket.destroy();
      });
      socket.write(`GET /q/test.json HTTP/1.1\r\nHost: 127.0.0.1:${w.port}\r\n\r\n`);
    });
    socket.write(head);
    socket.write(first);
  });
}

/** A multipart upload of `total` bytes in `filedata` to `route`, its first MiB sent before the answer. */
function partialUpload(route: string, total: number, after: After) {
  const head = `POST ${route} HTTP/1.1\r\nHost: 127.0.0.1:${w.port}\r\nContent-Type: ${MULTIPART}\r\nAccept: application/json\r\nContent-Length: ${total}\r\n\r\n`;
  const first =
    part('x_format', 'json') +
    `--${B}\r\nContent-Disposition: form-data; name="filedata"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  return earlyAnswer(head, Buffer.concat([Buffer.from(first), Buffer.alloc(1 << 20)]), total, after);
}

describe('uploads to a message that cannot take them', () => {
  it('a 1 GiB upload to an unknown id gets its 404 after the first MiB, stores nothing, and has at most the drain bound more read before its connection is cut', async () => {
    const before = await fs.readdir(uploads);
    const r = await partialUpload('/q/test/20261201.0000.00.000.1/attach/new', 1 << 30, 'past');
    expect([r.status, JSON.parse(r.body)]).toEqual([404, ['fail', 'cannot find message']]);
    // Sent on after the answer, unreset, until the bound; what the socket buffers hold on both sides is the slack.
    expect(r.more).toBeGreaterThan(DRAIN_BOUNDS.bytes / 2);
    expect(r.more).toBeLessThan(DRAIN_BOUNDS.bytes + (32 << 20));
    expect(r.cut).toMatch(/^(EPIPE|ECONNRESET)$/);
    expect(await fs.readdir(uploads)).toEqual(before);
  });

  it('so does one to a message no longer in prep (its files are fixed once it is queued); the web still takes uploads to a prep message', async () => {
    const before = await fs.readdir(uploads);
    const r = await partialUpload(`/q/test/${failed}/attach/new`, 1 << 30, 'stop');
    expect([r.status, JSON.parse(r.body)]).toEqual([404, ['fail', 'cannot find message']]);
    expect(await fs.readdir(uploads)).toEqual(before);

    const form = new FormData();
    form.append('x_format', 'json');
    form.append('filedata', new Blob([Buffer.from('hello')]), 'hello.txt');
    const ok = await fetch(`${w.base}/q/test/${prep}/attach/new`, { method: 'POST', body: form });
    expect([ok.status, await ok.json()]).toEqual([200, ['ok', '5d41402abc4b2a76b9719d911017c592-Attached successfully']]);
    // The temp file was hard-linked into the message and its temp name removed.
    expect(await fs.readdir(uploads)).toEqual(before);
    const msg = (await (await fetch(`${w.base}/q/test/${prep}.json`)).json()) as { _attachments: Record<string, unknown> };
    expect(Object.keys(msg._attachments)).toEqual(['hello.txt']);
  });
});

describe('answers sent before the body is in', () => {
  /** Each early answer, the request head that draws it, and its status; the body is 3 MiB, its first 1.5 MiB sent before the answer. */
  const EARLY: { what: string; head: (length: number) => string; first?: string; status: number }[] = [
    {
      what: 'a JSON body past max_body_bytes (fastify refuses it)',
      head: (n) => `POST /q/test/new_message.json HTTP/1.1\r\nHost: 127.0.0.1:${w.port}\r\nContent-Type: application/json\r\nContent-Length: ${n}\r\n\r\n`,
      status: 413,
    },
    {
      what: 'a Host the web does not serve',
      head: (n) => `POST /q/test/new_message HTTP/1.1\r\nHost: elsewhere.example\r\nContent-Type: application/octet-stream\r\nContent-Length: ${n}\r\n\r\n`,
      status: 421,
    },
    {
      what: 'an upload to a message that does not exist',
      head: (n) =>
        `POST /q/test/20261201.0000.00.000.1/attach/new HTTP/1.1\r\nHost: 127.0.0.1:${w.port}\r\nContent-Type: ${MULTIPART}\r\nContent-Length: ${n}\r\n\r\n`,
      first: part('x', 'y') + `--${B}\r\nContent-Disposition: form-data; name="filedata"; filename="f"\r\n\r\n`,
      status: 404,
    },
  ];

  it('each lets a client still sending finish its body unreset, and its connection serves the next request', async () => {
    const length = 3 << 20;
    for (const e of EARLY) {
      // The first 1.5 MiB: the part heads the answer waits for, if any, then filler.
      const first = Buffer.concat([Buffer.from(e.first ?? ''), Buffer.alloc(3 << 19, 32)]);
      const r = await earlyAnswer(e.head(length), first, length, 'rest');
      expect([e.what, r.status, r.more, r.next]).toEqual([e.what, e.status, length - first.length, 200]);
    }
  });
});
