// Relay parts without daemons: dest parsing, loop rule, back-off, the far copy's fields, the streamed multipart body.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { backoffScale, resendDelay, resendText } from '../../src/script-kit/resend-delay.js';
import { HttpClient } from '../../src/script-kit/http-client.js';
import { multipartFile } from '../../src/relay/multipart-file.js';
import { relayCopy } from '../../src/relay/relay-copy.js';
import { readRelayId, removeRelayId, writeRelayId } from '../../src/relay/relay-id.js';
import { LOOP_TEXT, RELAY_DEST_TEXT, relayLoop } from '../../src/relay/relay-loop.js';
import { messageUrl, relayTarget } from '../../src/message/relay-target.js';

describe('relayTarget', () => {
  it('takes everything before /q/<name> as the base, relative_root included', () => {
    expect(relayTarget('http://h:3333/q/test')).toEqual({ base: 'http://h:3333', queue: 'test' });
    expect(relayTarget('http://h:3333/q/test/')).toEqual({ base: 'http://h:3333', queue: 'test' });
    expect(relayTarget('http://h/therq/q/test')).toEqual({ base: 'http://h/therq', queue: 'test' });
    expect(relayTarget('https://h:8443//deep/root/q/box_que/20261121.1643.46.613.2164022')).toEqual({ base: 'https://h:8443//deep/root', queue: 'box_que' });
    expect(messageUrl('http://h/therq', 'test', '20261121.1643.46.613.1')).toBe('http://h/therq/q/test/20261121.1643.46.613.1');
  });

  it('refuses what is not an http URL with a /q/<queue>', () => {
    expect(() => relayTarget('test')).toThrow(/dest: expected an http\(s\):\/\/host\[:port\]\[\/root\]\/q\/<queue> URL, received "test"/);
    expect(() => relayTarget('ftp://h/q/x')).toThrow(/received "ftp:\/\/h\/q\/x"/);
    expect(() => relayTarget('http://h/queue/x')).toThrow(/no \/q\/<queue> in the path/);
    expect(() => relayTarget('http://h/q/a.b')).toThrow(/queue name: expected letters/);
  });
});

describe('relayLoop (spec §11.3)', () => {
  it('brightroll rule: the origin starts with the dest', () => {
    expect(relayLoop('http://a/q/relay', 'http://a/q/relay/20261121.1643.46.613.1', 'relay')).toBe(LOOP_TEXT);
    expect(relayLoop('http://a/q/test', 'http://a/q/test/20261121.1643.46.613.1', 'test')).toBe(LOOP_TEXT);
  });
  it('a dest naming a relay queue can only go round', () => {
    expect(relayLoop('http://b/q/relay', 'http://a/q/x/1', 'relay')).toBe(RELAY_DEST_TEXT);
  });
  it('an ordinary relay passes', () => {
    expect(relayLoop('http://b/q/test', 'http://a/q/relay/1', 'test')).toBeNull();
    expect(relayLoop('http://b/q/test', '', 'test')).toBeNull();
  });
});

describe('resend back-off', () => {
  it('is count²·unit, capped at an hour, scaled', () => {
    expect([0, 1, 2, 3, 4].map((c) => resendDelay(c, 10))).toEqual([0, 10, 40, 90, 160]);
    expect(resendDelay(30, 10)).toBe(3600);
    expect(resendDelay(3, 60)).toBe(540);
    expect(resendDelay(3, 10, 0.1)).toBe(9);
    expect(resendDelay(NaN, 10)).toBe(0);
  });
  it('reads RQ_RELAY_BACKOFF_SCALE, anything odd meaning 1', () => {
    expect(backoffScale({})).toBe(1);
    expect(backoffScale({ RQ_RELAY_BACKOFF_SCALE: '0.05' })).toBe(0.05);
    expect(backoffScale({ RQ_RELAY_BACKOFF_SCALE: 'fast' })).toBe(1);
    expect(backoffScale({ RQ_RELAY_BACKOFF_SCALE: '-1' })).toBe(1);
  });
  it('keeps the reason on one short line', () => {
    expect(resendText(40, 'prep: connect\nECONNREFUSED')).toBe('40-prep: connect ECONNREFUSED');
    expect(resendText(0, 'x'.repeat(400)).length).toBe(2 + 300);
  });
});

describe('relayCopy', () => {
  it('copies the classic field list, count+1, _method prep; never force_remote or due', () => {
    const msg = {
      msg_id: '1',
      dest: 'http://b/q/t',
      src: 's',
      count: 2,
      max_count: 9,
      param1: 'a',
      param4: 'd',
      post_run_webhook: ['http://w/'],
      orig_msg_id: 'http://a/q/relay/1',
      due: 5,
      force_remote: true,
      status: 'x',
    };
    expect(relayCopy(msg)).toEqual({
      dest: 'http://b/q/t',
      src: 's',
      count: 3,
      max_count: 9,
      param1: 'a',
      param4: 'd',
      post_run_webhook: ['http://w/'],
      orig_msg_id: 'http://a/q/relay/1',
      _method: 'prep',
    });
    expect(relayCopy({ dest: 'x' }).count).toBe(1);
  });
});

describe('job/relay_id', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-relayid-'));
  });
  afterEach(() => fs.rm(dir, { recursive: true, force: true }));

  it('is written through a temp file and read back; absent is null', async () => {
    expect(await readRelayId(dir)).toBeNull();
    await writeRelayId(dir, 'http://b/q/test/20261121.1643.46.613.1');
    expect(await readRelayId(dir)).toBe('http://b/q/test/20261121.1643.46.613.1');
    expect(await fs.readdir(dir)).toEqual(['relay_id']);
    await removeRelayId(dir);
    expect(await readRelayId(dir)).toBeNull();
  });
});

describe('multipartFile over HttpClient', () => {
  let server: http.Server;
  let port: number;
  let seen: { length: number; received: number; fields: Record<string, string>; filename: string; md5: string }[];
  let dir: string;

  beforeEach(async () => {
    seen = [];
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-multipart-'));
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const boundary = /boundary=(.+)$/.exec(String(req.headers['content-type']))?.[1] ?? '';
        const parsed = parseMultipart(body, boundary);
        const md5 = crypto.createHash('md5').update(parsed.file).digest('hex');
        seen.push({ length: Number(req.headers['content-length']), received: body.length, fields: parsed.fields, filename: parsed.filename, md5 });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(['ok', `${md5}-Attached successfully`]));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as net.AddressInfo).port;
  });
  afterEach(async () => {
    await new Promise((r) => server.close(r));
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('sends exactly Content-Length bytes; the server parses the fields and the file; md5 matches', async () => {
    const file = path.join(dir, 'data.bin');
    const bytes = crypto.randomBytes(3 * 1048576 + 17);
    await fs.writeFile(file, bytes);
    const client = new HttpClient();
    try {
      for (const name of ['data.bin', 'we"ird\\ name ü.bin']) {
        const body = await multipartFile({ x_format: 'json', pathname: name, msg_id: '20261121.1643.46.613.1' }, 'filedata', file, name);
        const reply = await client.request(`http://127.0.0.1:${port}/q/t/1/attach/new`, {
          method: 'POST',
          headers: { 'content-type': body.contentType },
          body,
        });
        expect(reply.status).toBe(200);
        expect(JSON.parse(reply.body)).toEqual(['ok', `${body.md5()}-Attached successfully`]);
        expect(body.md5()).toBe(crypto.createHash('md5').update(bytes).digest('hex'));
        const s = seen.at(-1)!;
        expect(s.received).toBe(s.length);
        expect(s.length).toBe(body.length);
        expect(s.fields).toEqual({ x_format: 'json', pathname: name, msg_id: '20261121.1643.46.613.1' });
        expect(s.filename).toBe(name);
        expect(s.md5).toBe(body.md5());
      }
    } finally {
      client.close();
    }
  });

  it('reuses one keep-alive connection for consecutive requests', async () => {
    const sockets = new Set<net.Socket>();
    server.on('connection', (s) => sockets.add(s));
    const client = new HttpClient();
    try {
      for (let i = 0; i < 3; i++) expect((await client.postForm(`http://127.0.0.1:${port}/x`, { a: String(i) })).status).toBe(200);
      await fs.writeFile(path.join(dir, 'f'), 'abc');
      const body = await multipartFile({}, 'filedata', path.join(dir, 'f'), 'f');
      await client.request(`http://127.0.0.1:${port}/y`, { method: 'POST', headers: { 'content-type': body.contentType }, body });
      expect(sockets.size).toBe(1);
    } finally {
      client.close();
    }
  });
});

/** A small multipart reader for the test server: text fields, one file, the quoted filename unescaped. */
function parseMultipart(body: Buffer, boundary: string): { fields: Record<string, string>; filename: string; file: Buffer } {
  const fields: Record<string, string> = {};
  let filename = '';
  let file = Buffer.alloc(0);
  const delim = Buffer.from(`--${boundary}`);
  let pos = body.indexOf(delim);
  while (pos >= 0) {
    const start = pos + delim.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delim, start);
    const part = body.subarray(start + 2, next - 2);
    const sep = part.indexOf('\r\n\r\n');
    const head = part.subarray(0, sep).toString('utf8');
    const content = part.subarray(sep + 4);
    const name = /name="((?:[^"\\]|\\.)*)"/.exec(head)![1];
    const fn = /filename="((?:[^"\\]|\\.)*)"/.exec(head);
    if (fn) {
      filename = fn[1].replace(/\\(.)/g, '$1');
      file = Buffer.from(content);
    } else {
      fields[name] = content.toString('utf8');
    }
    pos = next;
  }
  return { fields, filename, file };
}
