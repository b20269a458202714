// The script side of the queue protocol (spec §4.6) for rq's own TypeScript queue scripts: lines on fd 3, replies on fd 4.
import { type DupAnswer, readDupReply } from '../ipc/dup-reply.js';
import fs from 'node:fs';
import { RqError } from '../errors.js';

export interface PipeFds {
  write: number;
  read: number;
}

/** fds from RQ_WRITE / RQ_READ (3 and 4 when unset, as the classic scripts assume). */
export function pipeFds(env: NodeJS.ProcessEnv): PipeFds {
  const fd = (v: string | undefined, dflt: number) => (v !== undefined && /^\d+$/.test(v) ? Number(v) : dflt);
  return { write: fd(env.RQ_WRITE, 3), read: fd(env.RQ_READ, 4) };
}

/**
 * Writes protocol lines synchronously (one write(2) per line, so a line is never split and is
 * on the pipe before the next step starts) and reads the one-line reply to a `dup`.
 */
export class ScriptPipe {
  private pending = Buffer.alloc(0);

  constructor(private readonly fds: PipeFds) {}

  /** `keyword text`: newlines inside the text would start a bogus line, so they become spaces. */
  send(keyword: string, text?: string): void {
    const line = text === undefined ? keyword : `${keyword} ${text.replace(/[\r\n]+/g, ' ')}`;
    const buf = Buffer.from(`${line}\n`);
    let off = 0;
    while (off < buf.length) off += fs.writeSync(this.fds.write, buf, off);
  }

  /** `dup <delay>-X-<dest>` on fd 3, its answer on fd 4 read once: the new copy's id, or the refusal's text. */
  dup(dest: string): DupAnswer {
    return readDupReply(this.request('dup', `0-X-${dest}`));
  }

  /** Sends a line and blocks until the queue's one-line answer arrives on the read fd. */
  request(keyword: string, text: string): string {
    this.send(keyword, text);
    return this.readLine();
  }

  private readLine(): string {
    const chunk = Buffer.alloc(4096);
    for (;;) {
      const nl = this.pending.indexOf(0x0a);
      if (nl >= 0) {
        const line = this.pending.subarray(0, nl).toString('utf8');
        this.pending = this.pending.subarray(nl + 1);
        return line;
      }
      let n: number;
      try {
        n = fs.readSync(this.fds.read, chunk, 0, chunk.length, null);
      } catch (err) {
        // A pipe inherited non-blocking answers EAGAIN until the reply is there: wait a moment.
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
          continue;
        }
        throw RqError.of('RQ_ERR_PROTOCOL', `reading the queue's reply on fd ${this.fds.read} failed: ${(err as Error).message}`);
      }
      if (n === 0) throw RqError.of('RQ_ERR_PROTOCOL', `the queue closed fd ${this.fds.read} before replying`);
      this.pending = Buffer.concat([this.pending, chunk.subarray(0, n)]);
    }
  }
}
