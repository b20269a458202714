// Sends a file from disk with a type from its extension, Last-Modified, and single-range `Range` support.
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RqError, isErrno } from '../errors.js';

// Types a browser may render; anything that could run script here (html, svg, xml) is sent as text.
const TYPES: Record<string, string> = {
  '.json': 'application/json',
  '.log': 'text/plain; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.csv': 'text/plain; charset=utf-8',
  '.html': 'text/plain; charset=utf-8',
  '.htm': 'text/plain; charset=utf-8',
  '.xml': 'text/plain; charset=utf-8',
  '.svg': 'text/plain; charset=utf-8',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.pdf': 'application/pdf',
  '.gz': 'application/gzip',
  '.zip': 'application/zip',
  '.tar': 'application/x-tar',
};

export function contentTypeOf(file: string): string {
  return TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}

export type Range = { start: number; end: number } | 'unsatisfiable' | null;

/**
 * Parses a `Range` header against a file size. Only one `bytes=a-b`, `bytes=a-` or `bytes=-n`
 * range is honoured; anything else (several ranges, other units, garbage) means "send it all".
 */
export function parseRange(header: string | undefined, size: number): Range {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (m[2] !== '' && Number(m[2]) < start) return null;
  }
  if (start >= size || size === 0) return 'unsatisfiable';
  return { start, end };
}

/**
 * Streams `file` (opened without following a symlink, so a link planted in a job directory
 * cannot expose files outside it). 404 when absent or not a regular file.
 */
export async function sendFile(req: FastifyRequest, reply: FastifyReply, file: string, what: string): Promise<FastifyReply> {
  let fd: number;
  try {
    fd = await new Promise<number>((resolve, reject) => fs.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW, (err, n) => (err ? reject(err) : resolve(n))));
  } catch (err) {
    if (isErrno(err, 'ENOENT') || isErrno(err, 'ELOOP') || isErrno(err, 'ENOTDIR')) throw RqError.of('RQ_ERR_FILE_NOT_FOUND', what, '');
    throw err;
  }
  const stat = await new Promise<fs.Stats>((resolve, reject) => fs.fstat(fd, (err, s) => (err ? reject(err) : resolve(s))));
  if (!stat.isFile()) {
    fs.close(fd, () => undefined);
    throw RqError.of('RQ_ERR_FILE_NOT_FOUND', what, ' (not a regular file)');
  }
  const size = stat.size;
  const range = parseRange(req.headers.range, size);
  reply.header('Accept-Ranges', 'bytes').header('Last-Modified', stat.mtime.toUTCString()).type(contentTypeOf(file));
  if (range === 'unsatisfiable') {
    fs.close(fd, () => undefined);
    return reply.code(416).header('Content-Range', `bytes */${size}`).type('text/plain; charset=utf-8').send('Byte range unsatisfiable');
  }
  const start = range ? range.start : 0;
  const end = range ? range.end : size - 1;
  if (range) reply.code(206).header('Content-Range', `bytes ${start}-${end}/${size}`);
  reply.header('Content-Length', String(Math.max(0, end - start + 1)));
  if (size === 0) {
    fs.close(fd, () => undefined);
    return reply.send('');
  }
  return reply.send(fs.createReadStream('', { fd, start, end, autoClose: true }));
}
