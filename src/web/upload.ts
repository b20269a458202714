// Streams a multipart upload to a temp file next to the queues (same filesystem, so the queue can hard-link it).
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type {} from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { RqError } from '../errors.js';
import { nestParams, requireShallow, type Params } from './params.js';
import { fieldPair, malformedMultipart } from './request-params.js';

export interface Upload {
  /** Temp file holding the upload; the caller unlinks it. */
  tmpPath: string;
  filename: string;
  size: number;
}

export interface UploadResult {
  /** The first file of the field, if the form had one with a file name. */
  file: Upload | null;
  /** Every file of the field with a file name, at most `maxFiles`, in the order sent. */
  files: Upload[];
  params: Params;
}

function tooLarge(limit: number): RqError {
  return RqError.of('RQ_ERR_UPLOAD_TOO_LARGE', limit);
}

/** Is this the multipart "file too large" error, in any of the shapes the plugin raises it? */
function isTooLarge(err: unknown): boolean {
  const e = err as { code?: string; statusCode?: number };
  return e?.code === 'FST_REQ_FILE_TOO_LARGE' || e?.statusCode === 413;
}

/**
 * Reads a multipart body: the `fileField` parts (up to `maxFiles`) are written to `dir` as they arrive
 * (never held whole in memory); other files are drained; text fields are returned as nested params (and
 * reported as they arrive, so an error mid-upload can already answer in the requested format).
 */
export async function receiveUpload(req: FastifyRequest, dir: string, fileField: string, limit: number, onField?: (name: string, value: string) => void, maxFiles = 1): Promise<UploadResult> {
  const pairs: [string, string][] = [];
  const files: Upload[] = [];
  const cleanup = async () => {
    await Promise.all(files.map((f) => fsp.rm(f.tmpPath, { force: true })));
  };
  try {
    for await (const part of req.parts({ limits: { fileSize: limit } })) {
      if (part.type === 'field') {
        pairs.push(fieldPair(req, part));
        onField?.(part.fieldname, String(part.value));
        continue;
      }
      if (part.fieldname !== fileField || !part.filename || files.length >= maxFiles) {
        // Still read to the end: the next part only arrives after this one.
        part.file.resume();
        continue;
      }
      const tmpPath = path.join(dir, `rq-upload-${process.pid}-${randomUUID()}`);
      const file: Upload = { tmpPath, filename: part.filename, size: 0 };
      files.push(file);
      await pipeline(part.file, fs.createWriteStream(tmpPath, { flags: 'wx', mode: 0o600 }));
      if (part.file.truncated) throw tooLarge(limit);
      file.size = (await fsp.stat(tmpPath)).size;
    }
  } catch (err) {
    await cleanup();
    if (isTooLarge(err)) throw tooLarge(limit);
    throw malformedMultipart(err);
  }
  const params = nestParams(pairs);
  requireShallow(params, 'multipart fields');
  return { file: files[0] ?? null, files, params };
}
