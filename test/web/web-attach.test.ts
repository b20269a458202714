// Attachments over HTTP: streamed multipart uploads (100 KB, 20 MB, HTTP/1.0), md5, limits, delete, Range downloads.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { type WebRoot, cookiesOf, execFileP, postForm, startWebRoot } from './web-root.js';

const LIMIT = 25 * 1024 * 1024;
let w: WebRoot;
let B: string;
let files: string;
let uploads: string;

beforeAll(async () => {
  w = await startWebRoot({
    config: { max_upload_bytes: LIMIT },
    setup: async (root) => {
      uploads = path.join(root, 'tmp');
      await fs.mkdir(uploads);
      return { tmpdir: uploads };
    },
  });
  B = w.base;
  files = path.join(w.root, 'files');
  await fs.mkdir(files);
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

async function makeFile(name: string, size: number): Promise<{ file: string; md5: string }> {
  const file = path.join(files, name);
  const data = randomBytes(size);
  await fs.writeFile(file, data);
  return { file, md5: createHash('md5').update(data).digest('hex') };
}

async function prep(): Promise<string> {
  const r = await fetch(`${B}/q/test/new_message`, {
    method: 'POST',
    body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'test', param1: 'done', _method: 'prep' }) }),
  });
  return ((await r.json()) as string[])[1].split('/').pop()!;
}

async function upload(id: string, file: string, name: string, format = 'json'): Promise<Response> {
  const fd = new FormData();
  fd.set('x_format', format);
  fd.set('filedata', new Blob([await fs.readFile(file)]), name);
  return fetch(`${B}/q/test/${id}/attach/new`, { method: 'POST', body: fd, redirect: 'manual' });
}

async function leftovers(): Promise<string[]> {
  return (await fs.readdir(uploads)).filter((n) => n.startsWith('rq-upload-'));
}

describe('POST /q/<q>/<id>/attach/new', () => {
  it('attaches a 100 KB upload (json mode) with its md5, hard-linked into the message', async () => {
    const id = await prep();
    const { file, md5 } = await makeFile('small.bin', 100 * 1024);
    const res = await upload(id, file, 'small.bin');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual(['ok', `${md5}-Attached successfully`]);
    const msg = (await (await fetch(`${B}/q/test/${id}.json`)).json()) as { _attachments: Record<string, { md5: string; size: number }> };
    expect(msg._attachments['small.bin']).toMatchObject({ md5, size: 100 * 1024 });
    expect(await leftovers()).toEqual([]);

    // Download: whole, a range, an unsatisfiable range.
    const whole = await fetch(`${B}/q/test/${id}/attach/small.bin`);
    expect(whole.status).toBe(200);
    expect(
      createHash('md5')
        .update(Buffer.from(await whole.arrayBuffer()))
        .digest('hex'),
    ).toBe(md5);
    const part = await fetch(`${B}/q/test/${id}/attach/small.bin`, { headers: { range: 'bytes=100-199' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${100 * 1024}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual((await fs.readFile(file)).subarray(100, 200));
    const tail = await fetch(`${B}/q/test/${id}/attach/small.bin`, { headers: { range: 'bytes=-10' } });
    expect(tail.status).toBe(206);
    expect((await tail.arrayBuffer()).byteLength).toBe(10);
    const past = await fetch(`${B}/q/test/${id}/attach/small.bin`, { headers: { range: `bytes=${100 * 1024}-` } });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe(`bytes */${100 * 1024}`);
    expect(await past.text()).toBe('Byte range unsatisfiable');
  });

  it('takes one file: a second is refused with 400 naming filedata, nothing attached and no temp file left', async () => {
    const id = await prep();
    const fd = new FormData();
    fd.set('x_format', 'json');
    fd.append('filedata', new Blob(['one']), 'one.txt');
    fd.append('filedata', new Blob(['two']), 'two.txt');
    const res = await fetch(`${B}/q/test/${id}/attach/new`, { method: 'POST', body: fd });
    expect([res.status, await res.json()]).toEqual([400, ['fail', 'filedata: expected at most 1 file, received 2 files or more']]);
    expect(((await (await fetch(`${B}/q/test/${id}.json`)).json()) as { _attachments?: object })._attachments ?? {}).toEqual({});
    expect(await leftovers()).toEqual([]);
  });

  it('streams a 20 MB upload (curl, HTTP/1.1 with Expect) and an HTTP/1.0 upload (curl -0)', async () => {
    const id = await prep();
    const big = await makeFile('big.bin', 20 * 1024 * 1024);
    const { stdout } = await execFileP('curl', ['-sS', '-F', 'x_format=json', '-F', `filedata=@${big.file};filename=big.bin`, `${B}/q/test/${id}/attach/new`], {
      maxBuffer: 1 << 20,
    });
    expect(JSON.parse(stdout)).toEqual(['ok', `${big.md5}-Attached successfully`]);
    const old = await makeFile('old.txt', 300 * 1024);
    const r10 = await execFileP('curl', ['-sS', '-0', '-F', 'x_format=json', '-F', `filedata=@${old.file};filename=old.txt`, `${B}/q/test/${id}/attach/new`]);
    expect(JSON.parse(r10.stdout)).toEqual(['ok', `${old.md5}-Attached successfully`]);
    const attach = path.join(queuePaths(w.root, 'test').state.prep, id, 'attach');
    expect((await fs.stat(path.join(attach, 'big.bin'))).size).toBe(20 * 1024 * 1024);
    expect(await leftovers()).toEqual([]);
    // Committed and run: the attachment follows the message.
    expect(await (await postForm(`${B}/q/test/${id}`, { _method: 'commit', x_format: 'json' })).json()).toEqual(['ok', 'msg commited']);
  });

  it('refuses an upload above max_upload_bytes with a clear 413 and leaves nothing behind', async () => {
    const id = await prep();
    const huge = await makeFile('huge.bin', LIMIT + 1024 * 1024);
    const { stdout } = await execFileP('curl', [
      '-sS',
      '-w',
      '\n%{http_code}',
      '-F',
      'x_format=json',
      '-F',
      `filedata=@${huge.file};filename=huge.bin`,
      `${B}/q/test/${id}/attach/new`,
    ]);
    const [body, code] = [stdout.slice(0, stdout.lastIndexOf('\n')), stdout.slice(stdout.lastIndexOf('\n') + 1)];
    expect(code).toBe('413');
    expect(JSON.parse(body)).toEqual(['fail', `Upload too large: the limit is ${LIMIT} bytes (max_upload_bytes in config/config.json)`]);
    expect(await leftovers()).toEqual([]);
    const msg = (await (await fetch(`${B}/q/test/${id}.json`)).json()) as Record<string, unknown>;
    expect(msg._attachments).toBeUndefined();
  });

  it('html mode: flash + 303 on success; the classic text with a 400 on refusal; 404 without filedata', async () => {
    const id = await prep();
    const f = await makeFile('pic.jpg', 2048);
    const ok = await upload(id, f.file, 'pic.jpg', 'html');
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe(`${w.origin}/q/test/${id}`);
    const page = await (await fetch(`${B}/q/test/${id}`, { headers: { cookie: cookiesOf(ok) } })).text();
    expect(page).toContain('Attached message successfully');
    expect(page).toContain(f.md5);
    expect(page).toContain('id="upload-form"');
    const jpg = await fetch(`${B}/q/test/${id}/attach/pic.jpg`);
    expect(jpg.headers.get('content-type')).toBe('image/jpeg');
    expect(jpg.headers.get('last-modified')).toBeTruthy();

    const dot = await upload(id, f.file, '.hidden', 'html');
    expect(dot.status).toBe(400);
    expect(await dot.text()).toBe(`Commit test/${id} got ["fail", "Attachment name as a dot-file not allowed: .hidden"]`);

    const fd = new FormData();
    fd.set('x_format', 'json');
    fd.set('pathname', '/etc/passwd');
    const none = await fetch(`${B}/q/test/${id}/attach/new`, { method: 'POST', body: fd });
    expect(none.status).toBe(404);
    const notMultipart = await postForm(`${B}/q/test/${id}/attach/new`, { pathname: '/etc/passwd' });
    expect(notMultipart.status).toBe(404);

    // Not in prep any more: the queue refuses.
    await postForm(`${B}/q/test/${id}`, { _method: 'commit', x_format: 'json' });
    const late = await upload(id, f.file, 'late.jpg');
    expect(await late.json()).toEqual(['fail', 'cannot find message']);
    expect(await leftovers()).toEqual([]);
  });

  it('deletes an attachment (json and html) and refuses other _method values', async () => {
    const id = await prep();
    const f = await makeFile('a.txt', 10);
    await upload(id, f.file, 'a.txt');
    await upload(id, f.file, 'b.txt');
    const bad = await postForm(`${B}/q/test/${id}/attach/a.txt`, { _method: 'put' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toBe('400 - Invalid method param');
    const j = await postForm(`${B}/q/test/${id}/attach/a.txt`, { _method: 'delete', x_format: 'json' });
    expect(await j.json()).toEqual(['ok', 'Attachment deleted successfully']);
    const again = await postForm(`${B}/q/test/${id}/attach/a.txt`, { _method: 'delete', x_format: 'json' });
    expect(await again.json()).toEqual([false, 'No attachment with that named for msg']);
    const h = await postForm(`${B}/q/test/${id}/attach/b.txt`, { _method: 'delete' });
    expect(h.status).toBe(303);
    expect(await (await fetch(`${B}/q/test/${id}`, { headers: { cookie: cookiesOf(h) } })).text()).toContain('Attachment deleted successfully');
    const hFail = await postForm(`${B}/q/test/${id}/attach/b.txt`, { _method: 'delete' });
    expect(await hFail.text()).toBe(`Delete of attach b.txt on test/${id} got [false, "No attachment with that named for msg"]`);
  });
});
