// The rq1/rq2 local socket framing (spec §6.6): `rq1 ` + 8-digit byte length + space + payload.

export type Proto = 'rq1' | 'rq2';

const HEADER_BYTES = 13;
const LENGTH_DIGITS = 8;
/** The largest length eight decimal digits can carry. */
export const MAX_FRAME_BYTES = 99_999_999;
const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

/** A byte stream that is not a sequence of frames; the connection cannot be resynchronised. */
export class FrameError extends Error {
  /** Payloads that were complete before the bad bytes, so a server can still answer them in order. */
  readonly frames: Buffer[];
  constructor(message: string, frames: Buffer[] = []) {
    super(message);
    this.name = 'FrameError';
    this.frames = frames;
  }
}

export function encodeFrame(proto: Proto, payload: string | Buffer): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  if (body.length > MAX_FRAME_BYTES) {
    throw new FrameError(`${proto} payload of ${body.length} bytes is over the ${MAX_FRAME_BYTES} bytes an 8-digit length can carry`);
  }
  const header = Buffer.from(`${proto} ${String(body.length).padStart(LENGTH_DIGITS, '0')} `, 'latin1');
  return Buffer.concat([header, body], HEADER_BYTES + body.length);
}

/** Printable rendering of raw header bytes for error messages. */
function showBytes(bytes: Buffer): string {
  return JSON.stringify(bytes.toString('latin1'));
}

/**
 * Incremental decoder: feed it whatever the socket delivers; it returns each payload once whole.
 * After it has thrown, the stream is out of step and the decoder must not be used again.
 */
export class FrameDecoder {
  private readonly magic: Buffer;
  private readonly maxBytes: number;
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Payload length of the frame being read, once its header is in; null while waiting for a header. */
  private want: number | null = null;

  constructor(proto: Proto, maxBytes: number = DEFAULT_MAX_BYTES) {
    this.magic = Buffer.from(`${proto} `, 'latin1');
    this.maxBytes = Math.min(maxBytes, MAX_FRAME_BYTES);
  }

  /** Bytes received but not yet returned as a payload (a partial header or payload). */
  pending(): number {
    return this.buffered;
  }

  /** True between the first byte of a frame and its last: a connection ending now cut a request short. */
  insideFrame(): boolean {
    return this.buffered > 0 || this.want !== null;
  }

  push(chunk: Buffer): Buffer[] {
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
    }
    const out: Buffer[] = [];
    for (;;) {
      if (this.want === null) {
        // Check the magic as soon as its bytes are here, so a wrong protocol fails fast
        // instead of waiting for 13 bytes a confused peer may never send.
        const head = this.peek(Math.min(this.buffered, HEADER_BYTES));
        const magicSeen = Math.min(head.length, this.magic.length);
        if (!head.subarray(0, magicSeen).equals(this.magic.subarray(0, magicSeen))) {
          throw new FrameError(`bad frame magic ${showBytes(head.subarray(0, this.magic.length))}, expected ${showBytes(this.magic)}`, out);
        }
        for (let i = this.magic.length; i < Math.min(head.length, this.magic.length + LENGTH_DIGITS); i++) {
          const c = head[i];
          if (c < 0x30 || c > 0x39) {
            throw new FrameError(
              `bad frame length ${showBytes(head.subarray(this.magic.length, this.magic.length + LENGTH_DIGITS))}, expected ${LENGTH_DIGITS} decimal digits`,
              out,
            );
          }
        }
        if (head.length < HEADER_BYTES) return out;
        if (head[HEADER_BYTES - 1] !== 0x20) {
          throw new FrameError(`missing space after frame length, found ${showBytes(head.subarray(HEADER_BYTES - 1))}`, out);
        }
        const length = Number(head.toString('latin1', this.magic.length, HEADER_BYTES - 1));
        if (length > this.maxBytes) {
          throw new FrameError(`frame of ${length} bytes is over the ${this.maxBytes}-byte limit`, out);
        }
        this.consume(HEADER_BYTES);
        this.want = length;
      }
      if (this.buffered < this.want) return out;
      out.push(this.take(this.want));
      this.want = null;
    }
  }

  /** The first n buffered bytes, without consuming them. */
  private peek(n: number): Buffer {
    if (this.chunks.length > 0 && this.chunks[0].length >= n) return this.chunks[0].subarray(0, n);
    const all = Buffer.concat(this.chunks, this.buffered);
    this.chunks = [all];
    return all.subarray(0, n);
  }

  private take(n: number): Buffer {
    // No copy: socket chunks are fresh buffers that nothing else writes to.
    const got = this.peek(n);
    this.consume(n);
    return got;
  }

  private consume(n: number): void {
    this.buffered -= n;
    while (n > 0) {
      const first = this.chunks[0];
      if (first.length <= n) {
        n -= first.length;
        this.chunks.shift();
      } else {
        this.chunks[0] = first.subarray(n);
        n = 0;
      }
    }
  }
}
