// Range requests (spec §9.1, RFC 9110 §14): parseRange against every form a client sends, then the
// attachment and job-log downloads answering 206 / 416 / 200 with exact headers and bytes.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Range, parseRange } from '../../src/web/send-file.js';
import { waitFor } from '../helpers/rq-root.js';
import { budget } from '../helpers/time-budget.js';
import { type AttachedMessage, attachedDoneMessage } from './message-fixture.js';
import { type WebRoot, startWebRoot } from './web-root.js';

const UNSAT = 'unsatisfiable';

// null = "send the whole file": what the spec's server does for anything it does not honour
// (RFC 9110 lets a server ignore Range; a syntactically invalid one must be ignored).
const GRID: [label: string, header: string | undefined, size: number, expected: Range][] = [
  ['first byte', 'bytes=0-0', 100, { start: 0, end: 0 }],
  ['open end from 0', 'bytes=0-', 100, { start: 0, end: 99 }],
  ['exactly the whole file', 'bytes=0-99', 100, { start: 0, end: 99 }],
  ['inside', 'bytes=10-19', 100, { start: 10, end: 19 }],
  ['overlapping the end', 'bytes=95-200', 100, { start: 95, end: 99 }],
  ['last byte', 'bytes=99-99', 100, { start: 99, end: 99 }],
  ['open end at the last byte', 'bytes=99-', 100, { start: 99, end: 99 }],
  ['start = size', 'bytes=100-', 100, UNSAT],
  ['start = size, closed', 'bytes=100-100', 100, UNSAT],
  ['past the end', 'bytes=150-200', 100, UNSAT],
  ['suffix of 1', 'bytes=-1', 100, { start: 99, end: 99 }],
  ['suffix n < size', 'bytes=-10', 100, { start: 90, end: 99 }],
  ['suffix n = size', 'bytes=-100', 100, { start: 0, end: 99 }],
  ['suffix n > size', 'bytes=-150', 100, { start: 0, end: 99 }],
  ['suffix of 0', 'bytes=-0', 100, UNSAT],
  ['one-byte file, its byte', 'bytes=0-0', 1, { start: 0, end: 0 }],
  ['one-byte file, suffix', 'bytes=-1', 1, { start: 0, end: 0 }],
  ['one-byte file, start = size', 'bytes=1-', 1, UNSAT],
  ['empty file, open end', 'bytes=0-', 0, UNSAT],
  ['empty file, first byte', 'bytes=0-0', 0, UNSAT],
  ['empty file, suffix', 'bytes=-5', 0, UNSAT],
  ['inverted', 'bytes=5-2', 100, null],
  ['inverted past the end (invalid beats unsatisfiable)', 'bytes=150-120', 100, null],
  ['several ranges', 'bytes=0-1,5-6', 100, null],
  ['several ranges with a space', 'bytes=0-1, 5-6', 100, null],
  ['suffix among several', 'bytes=-5,0-1', 100, null],
  ['other unit', 'items=0-1', 100, null],
  ['unit in capitals', 'Bytes=0-1', 100, null],
  ['surrounding whitespace', ' bytes=0-9 ', 100, { start: 0, end: 9 }],
  ['space after =', 'bytes= 0-9', 100, null],
  ['space around -', 'bytes=0 - 9', 100, null],
  ['space around =', 'bytes = 0-9', 100, null],
  ['no range', 'bytes=', 100, null],
  ['dash only', 'bytes=-', 100, null],
  ['letters', 'bytes=a-b', 100, null],
  ['three numbers', 'bytes=1-2-3', 100, null],
  ['hex', 'bytes=0x10-20', 100, null],
  ['fraction', 'bytes=1.5-2', 100, null],
  ['plus sign', 'bytes=+1-2', 100, null],
  ['negative end', 'bytes=1--2', 100, null],
  ['garbage', 'garbage', 100, null],
  ['empty header', '', 100, null],
  ['missing header', undefined, 100, null],
  ['end beyond 2^53', 'bytes=0-99999999999999999999', 100, { start: 0, end: 99 }],
  ['start beyond 2^53', 'bytes=99999999999999999999-', 100, UNSAT],
];

describe('parseRange', () => {
  it.each(GRID)('%s: %j of %i bytes', (_label, header, size, expected) => {
    expect(parseRange(header, size)).toEqual(expected);
  });
});

let w: WebRoot;
let msg: AttachedMessage;

beforeAll(async () => {
  w = await startWebRoot();
  // verbs.sh `ansi` writes a line to stdout (the job log); the attachment is 1000 bytes of every value.
  msg = await attachedDoneMessage(w.base, w.root, 'test', { fields: { param1: 'ansi' } });
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

interface Case {
  range: string | null;
  status: number;
  contentRange: string | null;
  /** [start, end] of the bytes expected in the body (inclusive), or null for none. */
  slice: [number, number] | null;
}

const ATTACHMENT: Case[] = [
  { range: null, status: 200, contentRange: null, slice: [0, 999] },
  { range: 'bytes=0-0', status: 206, contentRange: 'bytes 0-0/1000', slice: [0, 0] },
  { range: 'bytes=10-19', status: 206, contentRange: 'bytes 10-19/1000', slice: [10, 19] },
  { range: 'bytes=990-', status: 206, contentRange: 'bytes 990-999/1000', slice: [990, 999] },
  { range: 'bytes=995-2000', status: 206, contentRange: 'bytes 995-999/1000', slice: [995, 999] },
  { range: 'bytes=-5', status: 206, contentRange: 'bytes 995-999/1000', slice: [995, 999] },
  { range: 'bytes=-5000', status: 206, contentRange: 'bytes 0-999/1000', slice: [0, 999] },
  { range: 'bytes=999-', status: 206, contentRange: 'bytes 999-999/1000', slice: [999, 999] },
  { range: 'bytes=1000-', status: 416, contentRange: 'bytes */1000', slice: null },
  { range: 'bytes=-0', status: 416, contentRange: 'bytes */1000', slice: null },
  { range: 'bytes=5-2', status: 200, contentRange: null, slice: [0, 999] },
  { range: 'bytes=0-1,5-6', status: 200, contentRange: null, slice: [0, 999] },
];

/** The log begins with rq's own line (pid, time), so its cases are built from its size on disk. */
const LOG = (n: number): Case[] => [
  { range: null, status: 200, contentRange: null, slice: [0, n - 1] },
  { range: 'bytes=0-9', status: 206, contentRange: `bytes 0-9/${n}`, slice: [0, 9] },
  // What the tail of a growing log asks for: everything from the last offset on.
  { range: `bytes=${n - 10}-`, status: 206, contentRange: `bytes ${n - 10}-${n - 1}/${n}`, slice: [n - 10, n - 1] },
  { range: 'bytes=-1', status: 206, contentRange: `bytes ${n - 1}-${n - 1}/${n}`, slice: [n - 1, n - 1] },
  { range: `bytes=${n}-`, status: 416, contentRange: `bytes */${n}`, slice: null },
];

async function expectServed(url: string, file: Buffer, c: Case): Promise<void> {
  const res = await fetch(url, { headers: c.range === null ? {} : { range: c.range } });
  const body = Buffer.from(await res.arrayBuffer());
  const label = c.range ?? 'no Range';
  expect(res.status, label).toBe(c.status);
  expect(res.headers.get('accept-ranges'), label).toBe('bytes');
  expect(res.headers.get('content-range'), label).toBe(c.contentRange);
  if (c.slice === null) {
    expect(body.toString(), label).toBe('Byte range unsatisfiable');
    return;
  }
  const want = file.subarray(c.slice[0], c.slice[1] + 1);
  expect(res.headers.get('content-length'), label).toBe(String(want.length));
  expect(body.equals(want), `body of ${label}`).toBe(true);
}

describe('Range on attachments: GET /q/<q>/<id>/attach/<name>', () => {
  it.each(ATTACHMENT)('$range ⇒ $status $contentRange', async (c) => {
    await expectServed(`${w.base}/q/test/${msg.id}/attach/${msg.name}`, msg.bytes, c);
  });
});

describe('what is not a plain non-empty file', () => {
  it('an empty file is 200 with no body; a directory is 404, not a stream of nothing', async () => {
    const job = path.dirname(msg.logFile);
    await fs.writeFile(path.join(job, 'empty.log'), '');
    await fs.mkdir(path.join(job, 'adir.log'), { recursive: true });
    const empty = await fetch(`${w.base}/q/test/${msg.id}/log/empty.log`);
    expect([empty.status, empty.headers.get('content-length'), await empty.text()]).toEqual([200, '0', '']);
    const dir = await fetch(`${w.base}/q/test/${msg.id}/log/adir.log`);
    expect(dir.status).toBe(404);
    expect(await dir.text()).toContain('not a regular file');
  });
});

describe('the type a file is sent with', () => {
  it('comes from its extension: .txt and .log as UTF-8 text, .json as JSON, .gif as an image, an unknown one as bytes', async () => {
    const job = path.dirname(msg.logFile);
    const files: [name: string, type: string][] = [
      ['notes.txt', 'text/plain; charset=utf-8'],
      ['other.log', 'text/plain; charset=utf-8'],
      ['state.json', 'application/json'],
      ['pic.gif', 'image/gif'],
      ['data.bin', 'application/octet-stream'],
    ];
    for (const [name, type] of files) {
      await fs.writeFile(path.join(job, name), 'x');
      const res = await fetch(`${w.base}/q/test/${msg.id}/log/${name}`);
      expect([name, res.status, res.headers.get('content-type'), await res.text()]).toEqual([name, 200, type, 'x']);
    }
  });
});

describe('Range on job logs: GET /q/<q>/<id>/log/stdio.log', () => {
  it('206, 416 and 200 over the log as it is on disk', async () => {
    const log = await fs.readFile(msg.logFile);
    expect(log.toString().endsWith('<script>alert(1)</script> & "quotes"\n')).toBe(true);
    for (const c of LOG(log.length)) await expectServed(`${w.base}/q/test/${msg.id}/log/stdio.log`, log, c);
  });
});

describe('descriptors of downloads', () => {
  it('each ranged download closes its file: after 40 of them the web process holds neither the attachment nor the log open', async () => {
    const pid = (await w.mgr.cmd('status'))[1]['[web]'].pid as number;
    const attachment = path.join(path.dirname(path.dirname(msg.logFile)), 'attach', msg.name);
    const files = await Promise.all([attachment, msg.logFile].map((f) => fs.stat(f)));
    /** The web process's descriptors open on either file, by device and inode. */
    const held = async () => {
      let n = 0;
      for (const fd of await fs.readdir(`/proc/${pid}/fd`)) {
        const s = await fs.stat(`/proc/${pid}/fd/${fd}`).catch(() => null);
        if (s && files.some((f) => f.dev === s.dev && f.ino === s.ino)) n++;
      }
      return n;
    };
    for (let i = 0; i < 20; i++) {
      for (const url of [`${w.base}/q/test/${msg.id}/attach/${msg.name}`, `${w.base}/q/test/${msg.id}/log/stdio.log`]) {
        const res = await fetch(url, { headers: { range: `bytes=${i}-${i + 9}` } });
        expect([url, res.status, (await res.arrayBuffer()).byteLength]).toEqual([url, 206, 10]);
      }
    }
    // The read stream closes its descriptor after the response's last bytes, on libuv's thread pool:
    // the client already has the whole answer then, and nothing the web process sends says the close
    // is done, so /proc is polled, for a bounded time. A leak keeps all 40 for good.
    await waitFor(async () => (await held()) === 0, "the downloads' descriptors to close", budget(5_000)).catch(() => undefined);
    expect(await held()).toBe(0);
  });
});
