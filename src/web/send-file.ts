// Sends a file from disk with a type from its extension, Last-Modified, and single-range `Range` support.
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { openBeneath } from '../spool/beneath.js';

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
 * Streams the regular file `parts` names below `base`, no link followed at any component and no
 * FIFO, socket or device ever opened (a script may have left any of them in its job/ or attach/).
 * 404 when absent or not a regular file, naming what it is.
 */
export async function sendFile(req: FastifyRequest, reply: FastifyReply, base: string, parts: readonly string[], what: string): Promise<FastifyReply> {
  const { fh, stat } = await openBeneath(base, parts, what);
  const size = Number(stat.size);
  const range = parseRange(req.headers.range, size);
  reply
    .header('Accept-Ranges', 'bytes')
    .header('Last-Modified', new Date(Number(stat.mtimeMs)).toUTCString())
    .type(contentTypeOf(parts[parts.length - 1]));
  if (range === 'unsatisfiable') {
    await fh.close();
    return reply.code(416).header('Content-Range', `bytes */${size}`).type('text/plain; charset=utf-8').send('Byte range unsatisfiable');
  }
  const start = range ? range.start : 0;
  const end = range ? range.end : size - 1;
  if (range) reply.code(206).header('Content-Range', `bytes ${start}-${end}/${size}`);
  reply.header('Content-Length', String(Math.max(0, end - start + 1)));
  if (size === 0) {
    await fh.close();
    return reply.send('');
  }
  return reply.send(fh.createReadStream({ start, end, autoClose: true }));
}
