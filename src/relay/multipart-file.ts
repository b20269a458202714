// A multipart/form-data body of text fields plus one file, streamed from disk with its md5 computed on the way.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import type http from 'node:http';
import { RqError } from '../errors.js';
import { writeChunk } from '../script-kit/http-client.js';

/** Big reads: fewer syscalls and socket writes per gigabyte, and still a bounded buffer. */
const READ_CHUNK = 1 << 20;

export interface MultipartFile {
  contentType: string;
  /** Exact byte length of the body (preamble + file + epilogue): sent as Content-Length. */
  length: number;
  /** Streams the body into the request. */
  write: (req: http.ClientRequest) => Promise<void>;
  /** md5 hex of the file bytes sent; set once `write` has finished. */
  md5(): string;
}

/** A quoted-string parameter value: `"` and `\` escaped, line breaks (never valid in names) dropped. */
function quoted(value: string): string {
  return `"${value.replace(/[\r\n]/g, '').replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

/**
 * Opens `file` and describes the body; the file is read only when `write` runs. Text fields
 * come first so a server sees x_format before the (possibly large) file part.
 */
export async function multipartFile(fields: Record<string, string>, fileField: string, file: string, filename: string): Promise<MultipartFile> {
  const boundary = `----rq-relay-${randomBytes(12).toString('hex')}`;
  let preamble = '';
  for (const [name, value] of Object.entries(fields)) {
    preamble += `--${boundary}\r\nContent-Disposition: form-data; name=${quoted(name)}\r\n\r\n${value}\r\n`;
  }
  preamble += `--${boundary}\r\nContent-Disposition: form-data; name=${quoted(fileField)}; filename=${quoted(filename)}\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const head = Buffer.from(preamble);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const size = (await fsp.stat(file)).size;
  const hash = createHash('md5');
  let digest: string | null = null;

  const write = async (req: http.ClientRequest): Promise<void> => {
    await writeChunk(req, head);
    let sent = 0;
    const stream = fs.createReadStream(file, { highWaterMark: READ_CHUNK });
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        sent += chunk.length;
        if (sent > size) break;
        hash.update(chunk);
        await writeChunk(req, chunk);
      }
    } finally {
      stream.destroy();
    }
    // Content-Length was promised from the size at open: a file that changed cannot be sent as announced.
    if (sent !== size) throw RqError.of('RQ_ERR_INVALID_ATTACHMENT', `${file} changed size while being sent (${size} bytes announced, ${sent} read)`);
    digest = hash.digest('hex');
    await writeChunk(req, tail);
  };

  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: head.length + size + tail.length,
    write,
    md5: () => {
      if (digest === null) throw RqError.of('RQ_ERR_PROTOCOL', `md5 of ${file} asked before the upload finished`);
      return digest;
    },
  };
}
