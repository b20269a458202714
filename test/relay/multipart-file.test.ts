// multipartFile at its edges: a file that grows or shrinks between open and send, the md5 asked too early, line breaks in a filename, the file part's type.
import fs from 'node:fs/promises';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { multipartFile } from '../../src/relay/multipart-file.js';

/** A request that takes every write at once and keeps what it was given. */
function recordingRequest(): { req: http.ClientRequest; sent: () => Buffer } {
  const chunks: Buffer[] = [];
  const req = { destroyed: false, write: (c: Buffer | string) => (chunks.push(Buffer.from(c)), true) } as unknown as http.ClientRequest;
  return { req, sent: () => Buffer.concat(chunks) };
}

describe('multipartFile edges', () => {
  let dir: string;
  let file: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-multipart-edges-'));
    file = path.join(dir, 'f');
    await fs.writeFile(file, 'abc');
  });
  afterEach(() => fs.rm(dir, { recursive: true, force: true }));

  it('a file grown after open: nothing past the announced size is sent, and the send fails naming both sizes', async () => {
    const body = await multipartFile({}, 'filedata', file, 'f');
    await fs.writeFile(file, Buffer.alloc(2 * 1048576, 1));
    const { req, sent } = recordingRequest();
    await expect(body.write(req)).rejects.toThrow(`${file} changed size while being sent (3 bytes announced, 1048576 read)`);
    expect(sent().includes(Buffer.alloc(3, 1))).toBe(false);
  });

  it('a file shrunk after open fails too, before the closing boundary', async () => {
    const body = await multipartFile({}, 'filedata', file, 'f');
    await fs.writeFile(file, 'a');
    const { req, sent } = recordingRequest();
    await expect(body.write(req)).rejects.toThrow('(3 bytes announced, 1 read)');
    expect(sent().toString().endsWith('a')).toBe(true);
  });

  it('md5 before the upload finished is an error; after, the md5 of the bytes sent', async () => {
    const body = await multipartFile({}, 'filedata', file, 'f');
    expect(() => body.md5()).toThrow(`md5 of ${file} asked before the upload finished`);
    const { req, sent } = recordingRequest();
    await body.write(req);
    expect(body.md5()).toBe('900150983cd24fb0d6963f7d28e17f72');
    expect(sent().length).toBe(body.length);
  });

  it('drops line breaks from a filename and types the file part as octet-stream', async () => {
    const body = await multipartFile({ a: '1' }, 'filedata', file, 'x\r\ny\n.bin');
    const { req, sent } = recordingRequest();
    await body.write(req);
    const text = sent().toString();
    const boundary = body.contentType.replace('multipart/form-data; boundary=', '');
    expect(boundary).toMatch(/^----rq-relay-[0-9a-f]{24}$/);
    expect(text).toBe(
      `--${boundary}\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="filedata"; filename="xy.bin"\r\nContent-Type: application/octet-stream\r\n\r\n` +
        `abc\r\n--${boundary}--\r\n`,
    );
  });
});
