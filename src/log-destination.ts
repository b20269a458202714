// Where pino's lines go: a file or fd that never blocks and never kills the daemon (a full disk, EIO, a closed pipe).
import fs from 'node:fs';
import path from 'node:path';

/** Lines held while a write is in flight; beyond this they are dropped, so a stuck disk cannot fill memory. */
export const MAX_PENDING_BYTES = 4 * 1024 * 1024;
/** A pipe that is full (EAGAIN) is tried again after this long: the reader is slow, not gone. */
const EAGAIN_RETRY_MS = 10;

/** The write calls, passed in so tests can fail them on demand. */
export interface DestinationFs {
  write: (fd: number, data: Buffer, cb: (err: NodeJS.ErrnoException | null, written: number) => void) => void;
  writeSync: (fd: number, data: string) => number;
}

const nodeFs: DestinationFs = {
  write: (fd, data, cb) => fs.write(fd, data, 0, data.length, null, cb),
  writeSync: (fd, data) => fs.writeSync(fd, data),
};

/**
 * A pino destination. Writes are asynchronous, one at a time, lines batched meanwhile. A write
 * that fails (ENOSPC, EDQUOT, EIO, EPIPE…) drops its lines and counts them: a daemon whose log
 * cannot be written goes on with its work (pino's own SonicBoom emits 'error' there, and an
 * unhandled 'error' ends the process: a full log disk would stop every queue answering). The first write that succeeds after drops calls `recovered(n)` once, which logs
 * the one warning saying how many lines were lost.
 */
export class LogDestination {
  private pending: string[] = [];
  private pendingBytes = 0;
  private writing = false;
  private dropped = 0;
  /** A write cut short by the error that followed left half a line: the next write starts a new one. */
  private torn = false;
  /** flush callbacks waiting for the write in flight. */
  private flushed: Array<(err?: Error) => void> = [];
  /** Rewrites each line before it is held (log-format.ts: pretty on a terminal; '' leaves it out); null keeps pino's JSON. */
  format: ((line: string) => string) | null = null;
  /** Called once per failing spell, with the number of lines lost, when writing works again. */
  recovered: (dropped: number) => void = () => undefined;

  constructor(
    private readonly fd: number,
    private readonly wfs: DestinationFs = nodeFs,
  ) {}

  /** Opens `file` for append (its directory made if missing); an fd (stdout, stderr) is used as it is. */
  static open(target: string | number, wfs?: DestinationFs): LogDestination {
    if (typeof target === 'number') return new LogDestination(target, wfs);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    return new LogDestination(fs.openSync(target, 'a', 0o640), wfs);
  }

  /** Lines lost so far in the current failing spell. */
  get droppedLines(): number {
    return this.dropped;
  }

  /** Nothing pending, nothing in flight. */
  get idle(): boolean {
    return !this.writing && !this.pending.length;
  }

  write(json: string): boolean {
    const line = this.format ? this.format(json) : json;
    // The format left the line out (a terminal's stop shows only its first and last line).
    if (line === '') return true;
    if (this.pendingBytes + line.length > MAX_PENDING_BYTES) {
      this.dropped += 1;
      return true;
    }
    this.pending.push(line);
    this.pendingBytes += line.length;
    if (!this.writing) this.next();
    return true;
  }

  /**
   * pino's logger.flush, called by a daemon about to exit: once a write in flight has landed, what
   * is pending is written synchronously (errors dropped) and `cb` runs. Without the wait, the lines
   * of that write (a daemon's last words before it stops) could be lost or land after later ones.
   */
  flush(cb?: (err?: Error) => void): void {
    if (this.writing) {
      if (cb) this.flushed.push(cb);
      return;
    }
    this.writeAllSync();
    cb?.();
  }

  /** pino calls flushSync on a final log: what is pending, now, whatever is in flight. */
  flushSync(): void {
    this.writeAllSync();
  }

  private writeAllSync(): void {
    const data = this.take();
    try {
      if (data) this.wfs.writeSync(this.fd, data);
    } catch {
      this.dropped += lineCount(data);
    }
  }

  private take(): string {
    const data = this.pending.join('');
    this.pending = [];
    this.pendingBytes = 0;
    return data;
  }

  private next(): void {
    if (!this.pending.length) return;
    this.writing = true;
    const data = this.take();
    this.send(Buffer.from(this.torn ? `\n${data}` : data), false);
  }

  private report(): void {
    const n = this.dropped;
    this.dropped = 0;
    this.recovered(n);
  }

  private send(data: Buffer, rest: boolean): void {
    this.wfs.write(this.fd, data, (err, written) => {
      if (err?.code === 'EAGAIN') {
        setTimeout(() => this.send(data, rest), EAGAIN_RETRY_MS).unref();
        return;
      }
      if (err) {
        this.dropped += lineCount(data);
        // Nothing of this write landed, unless it was the rest of one that did.
        this.torn ||= rest;
      } else {
        this.torn = false;
        if (written < data.length) {
          // A short write (a file on a nearly full disk): the rest goes next; its error, if any, counts it.
          this.send(data.subarray(written), true);
          return;
        }
        if (this.dropped) this.report();
      }
      this.writing = false;
      if (this.flushed.length) {
        const waiting = this.flushed;
        this.flushed = [];
        this.writeAllSync();
        for (const cb of waiting) cb();
        return;
      }
      this.next();
    });
  }
}

function lineCount(data: string | Buffer): number {
  let n = 0;
  for (let i = data.indexOf('\n'); i >= 0; i = data.indexOf('\n', i + 1)) n += 1;
  return Math.max(n, data.length ? 1 : 0);
}
