// Counts the parts of a multipart body as its bytes arrive, beside the parser: busboy skips a part without a Content-Disposition: form-data header in silence, and a count is how that is seen.
import type { FastifyRequest } from 'fastify';

/** The boundary of a multipart Content-Type (quoted or not), or null. */
export function boundaryOf(contentType: string | undefined): string | null {
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  return m ? (m[1] ?? m[2]) : null;
}

/**
 * Counts delimiter lines (`--boundary` at the start, else `\r\n--boundary`) in a stream of chunks,
 * those that straddle two chunks too, without copying the chunks. A whole body has one more
 * delimiter than parts (the closing one).
 */
export class DelimiterCount {
  private readonly needle: Buffer;
  /** The last needle.length - 1 bytes seen: where a delimiter cut by a chunk edge starts. */
  private tail: Buffer;
  delimiters = 0;

  constructor(boundary: string) {
    this.needle = Buffer.from(`\r\n--${boundary}`, 'latin1');
    // As if the body began after a line break: a delimiter on its first line counts too.
    this.tail = Buffer.from('\r\n');
  }

  push(chunk: Buffer): void {
    const n = this.needle.length;
    const joint = Buffer.concat([this.tail, chunk.subarray(0, n - 1)]);
    for (let i = joint.indexOf(this.needle); i !== -1 && i < this.tail.length; i = joint.indexOf(this.needle, i + 1)) this.delimiters += 1;
    for (let i = chunk.indexOf(this.needle); i !== -1; i = chunk.indexOf(this.needle, i + n)) this.delimiters += 1;
    this.tail = chunk.length >= n - 1 ? Buffer.from(chunk.subarray(chunk.length - (n - 1))) : Buffer.concat([this.tail, chunk]).subarray(-(n - 1));
  }

  /** Parts sent, counting the closing delimiter out. */
  parts(): number {
    return Math.max(0, this.delimiters - 1);
  }
}

/** Listens to the request's bytes as the parser reads them (a second 'data' listener takes nothing from the pipe). */
export function partCounter(req: FastifyRequest): { parts(): number } {
  const boundary = boundaryOf(req.headers['content-type']);
  if (!boundary) return { parts: () => 0 };
  const count = new DelimiterCount(boundary);
  req.raw.on('data', (chunk: Buffer) => count.push(chunk));
  return count;
}
