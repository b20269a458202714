// The client's format for a refusal that comes before the route reads the body (x_format in a form, JSON or multipart body, fields ahead of the first file), for a daemon that does not answer, and not from an attachment's name; in-process.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/web/app.js';
import { inProcessDeps } from './in-process-app.js';

let root: string;
let uploads: string;
let app: FastifyInstance;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-request-params-'));
  for (const d of ['config', 'queues', 'timers', 'uploads']) await fs.mkdir(path.join(root, d));
  uploads = path.join(root, 'uploads');
  app = await buildApp(inProcessDeps(root, { uploadDir: uploads }));
});
afterAll(async () => {
  await app?.close();
  await fs.rm(root, { recursive: true, force: true });
});

const BOUNDARY = 'rq-test-boundary';
type Part = [name: string, value: string] | [name: string, value: string, filename: string];

/** A multipart/form-data body of these parts, in order, as curl -F sends them. */
function multipart(parts: Part[]): { payload: string; headers: Record<string, string> } {
  const body = parts
    .map(([name, value, filename]) => {
      const disposition = `form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}`;
      return `--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n${filename ? 'Content-Type: text/plain\r\n' : ''}\r\n${value}\r\n`;
    })
    .join('');
  return { payload: `${body}--${BOUNDARY}--\r\n`, headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } };
}

const form = (body: string, headers: Record<string, string> = {}) => ({
  payload: body,
  headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
});

const MESG = JSON.stringify({ dest: 'nosuchq' });
const NOT_FOUND = ['fail', 'Queue not found: nosuchq'];

async function post(url: string, body: { payload: string; headers: Record<string, string> }) {
  const res = await app.inject({ method: 'POST', url, ...body });
  const json = String(res.headers['content-type']).startsWith('application/json');
  return { status: res.statusCode, body: json ? JSON.parse(res.body) : res.body.includes('<h2 id="not-found">Not Found</h2>') ? 'page' : res.body };
}

describe('a daemon that does not answer', () => {
  it('is a 503 naming it to a JSON client, which may try again; the classic 500 text to others', async () => {
    await fs.mkdir(path.join(root, 'queues', 'quiet'), { recursive: true });
    const ask = async (url: string, accept: string) => {
      const res = await app.inject({ method: 'POST', url, ...form('pause=1', { accept }) });
      return [res.statusCode, String(res.headers['content-type']).startsWith('application/json') ? JSON.parse(res.body) : res.body];
    };
    expect(await ask('/q/quiet/adminoper', 'application/json')).toEqual([503, ['fail', 'rq-mgr did not answer']]);
    expect(await ask('/q/quiet/adminoper', '*/*')).toEqual([500, "500 - Couldn't pause queue. Internal error."]);
    expect(await ask('/q/quiet/restart', 'application/json')).toEqual([503, ['fail', 'rq-mgr did not answer']]);
  });
});

describe("an attachment's name does not choose the refusal's format", () => {
  it('a missing report.txt or data.json answers JSON to a client that accepts JSON, the page to a browser', async () => {
    const id = '20261121.1643.46.613.2164022';
    const get = async (name: string, accept: string) => {
      const res = await app.inject({ method: 'GET', url: `/q/nosuchq/${id}/attach/${name}`, headers: { accept } });
      return { status: res.statusCode, json: String(res.headers['content-type']).startsWith('application/json') };
    };
    expect(await get('report.txt', 'application/json')).toEqual({ status: 404, json: true });
    expect(await get('data.json', 'text/html')).toEqual({ status: 404, json: false });
    expect(await get('data.json', 'application/json')).toEqual({ status: 404, json: true });
  });
});

describe('a refusal before the route reads its body answers in the format the body asks for', () => {
  it('new_message to an unknown queue: x_format=json in a form body is JSON; none, or x_format=html, keeps the Not Found page', async () => {
    expect(await post('/q/nosuchq/new_message', form(`x_format=json&mesg=${encodeURIComponent(MESG)}`))).toEqual({ status: 404, body: NOT_FOUND });
    expect(await post('/q/nosuchq/new_message', form(`mesg=${encodeURIComponent(MESG)}`))).toEqual({ status: 404, body: 'page' });
    const html = form(`x_format=html&mesg[dest]=nosuchq`, { accept: 'application/json' });
    expect(await post('/q/nosuchq/new_message', html)).toEqual({ status: 404, body: 'page' });
  });

  it('new_message to an unknown queue: a JSON body with its x_format, and a multipart x_format=json field (curl -F)', async () => {
    const jsonHtml = { payload: JSON.stringify({ x_format: 'html', mesg: { dest: 'nosuchq' } }), headers: { 'content-type': 'application/json' } };
    expect(await post('/q/nosuchq/new_message', jsonHtml)).toEqual({ status: 404, body: 'page' });
    expect(
      await post(
        '/q/nosuchq/new_message',
        multipart([
          ['x_format', 'json'],
          ['mesg', MESG],
        ]),
      ),
    ).toEqual({ status: 404, body: NOT_FOUND });
    const withFiles = multipart([
      ['mesg', MESG],
      ['x_format', 'json'],
      ['filedata', 'a'.repeat(100_000), 'a.txt'],
      ['filedata', 'b', 'b.txt'],
    ]);
    expect(await post('/q/nosuchq/new_message', withFiles)).toEqual({ status: 404, body: NOT_FOUND });
    expect(
      await post(
        '/q/nosuchq/new_message',
        multipart([
          ['x_format', 'html'],
          ['mesg[dest]', 'nosuchq'],
        ]),
      ),
    ).toEqual({ status: 404, body: 'page' });
    // Nothing of the refused upload was kept.
    expect(await fs.readdir(uploads)).toEqual([]);
  });

  it('only the fields ahead of the first file are read: a file is never read to find the format', async () => {
    const late = multipart([
      ['filedata', 'a', 'a.txt'],
      ['x_format', 'json'],
      ['mesg', MESG],
    ]);
    expect(await post('/q/nosuchq/new_message', late)).toEqual({ status: 404, body: 'page' });
  });

  it('other routes that read a multipart body: a message action and attach/new to an unknown queue', async () => {
    const id = '20261121.1643.46.613.1';
    const del = multipart([
      ['x_format', 'json'],
      ['_method', 'delete'],
    ]);
    expect(await post(`/q/nosuchq/${id}`, del)).toEqual({ status: 404, body: NOT_FOUND });
    const attach = multipart([
      ['x_format', 'json'],
      ['filedata', 'photo', 'photo.jpg'],
    ]);
    expect(await post(`/q/nosuchq/${id}/attach/new`, attach)).toEqual({ status: 404, body: NOT_FOUND });
    expect(await fs.readdir(uploads)).toEqual([]);
  });
});
