// A FIFO the bench reads line by line, each line stamped when it arrived: how a run script reports its first act straight to the bench, past rq.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';

export interface Line {
  text: string;
  /** performance.now() when the line was read. */
  at: number;
}

export class FifoLines {
  private buf = '';
  private lines: Line[] = [];
  private waiters: { take: (l: Line) => void; timer: NodeJS.Timeout }[] = [];

  private constructor(private readonly sock: net.Socket) {
    sock.setEncoding('utf8');
    sock.on('data', (chunk: string) => {
      const at = performance.now();
      this.buf += chunk;
      for (let nl = this.buf.indexOf('\n'); nl >= 0; nl = this.buf.indexOf('\n')) {
        const line = { text: this.buf.slice(0, nl), at };
        this.buf = this.buf.slice(nl + 1);
        const w = this.waiters.shift();
        if (w) w.take(line);
        else this.lines.push(line);
      }
    });
  }

  /** Makes the FIFO and opens it read-write, so it never reports end of file between writers and the open cannot block. */
  static open(file: string): FifoLines {
    execFileSync('mkfifo', [file]);
    const fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_NONBLOCK);
    return new FifoLines(new net.Socket({ fd, readable: true, writable: false }));
  }

  /** The next line not yet taken (waits for it). */
  next(timeoutMs = 10_000): Promise<Line> {
    const l = this.lines.shift();
    if (l) return Promise.resolve(l);
    return new Promise((resolve, reject) => {
      const w = {
        take: (line: Line) => {
          clearTimeout(w.timer);
          resolve(line);
        },
        timer: setTimeout(() => {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          reject(new Error(`no line on the FIFO after ${timeoutMs} ms`));
        }, timeoutMs),
      };
      this.waiters.push(w);
    });
  }

  /** Stops reading; a line still awaited (a failed round's) is given up, so its timer cannot hold the process. */
  close(): void {
    for (const w of this.waiters) clearTimeout(w.timer);
    this.waiters = [];
    this.sock.destroy();
  }
}
