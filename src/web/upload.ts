// Streams a multipart upload to a temp file next to the queues (same filesystem, so the queue can hard-link it).
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type {} from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { RqError, counted, invalidField } from '../errors.js';
import { nestParams, requireShallow, type Params } from './params.js';
import { readMultipart } from './multipart-reader.js';

export interface Upload {
  /** Temp file holding the upload; the caller unlinks it. */
  tmpPath: string;
  filename: string;
  size: number;
}

/** Reads a part to its end, storing nothing; how many bytes it had. */
async function drained(stream: NodeJS.ReadableStream): Promise<number> {
  let n = 0;
  for await (const chunk of stream) n += (chunk as Buffer).length;
  return n;
}

export interface UploadResult {
  /** The first file of the field, if the form had one with a file name. */
  file: Upload | null;
  /** Every file of the field with a file name, at most `maxFiles`, in the order sent. */
  files: Upload[];
  params: Params;
}

/**
 * Reads a multipart body: the `fileField` parts (up to `maxFiles`) are written to `dir` as they arrive
 * (never held whole in memory); other files are drained; text fields are returned as nested params (and
 * reported as they arrive, so an error mid-upload can already answer in the requested format).
 * `beforeStore` runs once, before the first byte of a file is stored (the fields sent ahead of it
 * are in by then): a refusal there (the message is not there to attach to) stores nothing.
 */
export async function receiveUpload(
  req: FastifyRequest,
  dir: string,
  fileField: string,
  limit: number,
  onField?: (name: string, value: string) => void,
  maxFiles = 1,
  beforeStore?: () => Promise<void>,
): Promise<UploadResult> {
  const pairs: [string, string][] = [];
  const files: Upload[] = [];
  let checked = false;
  try {
    await readMultipart(req, {
      fileSize: limit,
      onField: (name, value) => {
        pairs.push([name, value]);
        onField?.(name, value);
      },
      onFile: async (part) => {
        if (part.fieldname !== fileField) {
          // Still read to the end: the next part only arrives after this one.
          part.file.resume();
          return;
        }
        // A browser sends a file input left empty as a part with no file name and no bytes: nothing
        // chosen. Bytes without a name, or a file past the count, would be lost without a word.
        if (!part.filename) {
          const bytes = await drained(part.file);
          if (bytes > 0) throw invalidField(fileField, 'a file name for every file sent', counted(bytes, 'bytes in a part of no file name'));
          return;
        }
        if (files.length >= maxFiles) {
          await drained(part.file);
          throw invalidField(fileField, `at most ${maxFiles} ${maxFiles === 1 ? 'file' : 'files'}`, counted(files.length + 1, 'files or more'));
        }
        if (!checked) {
          await beforeStore?.();
          checked = true;
        }
        const tmpPath = path.join(dir, `rq-upload-${process.pid}-${randomUUID()}`);
        const file: Upload = { tmpPath, filename: part.filename, size: 0 };
        files.push(file);
        await pipeline(part.file, fs.createWriteStream(tmpPath, { flags: 'wx', mode: 0o600 }));
        if (part.file.truncated) throw RqError.of('RQ_ERR_UPLOAD_TOO_LARGE', limit);
        file.size = (await fsp.stat(tmpPath)).size;
      },
    });
  } catch (err) {
    await Promise.all(files.map((f) => fsp.rm(f.tmpPath, { force: true })));
    throw err;
  }
  const params = nestParams(pairs);
  requireShallow(params, 'multipart fields');
  return { file: files[0] ?? null, files, params };
}
