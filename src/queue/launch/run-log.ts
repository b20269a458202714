// A run's job/stdio.log as rq bounds it: rq's own marker lines and the run's size limit.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { APPEND, openOwnSync } from '../../spool/own-files.js';
import { nodeSpoolFs } from '../../spool/spool-fs.js';

/** How much of a script's output rq keeps, from the queue's config (max_line_bytes, max_log_bytes). */
export interface OutputBounds {
  maxLineBytes: number;
  /** Bytes one run may add to stdio.log; none when absent. */
  maxLogBytes?: number;
}

export function cutLineMarker(bytes: number, limit: number): string {
  return `rq: fd 3 line of ${bytes} bytes cut at ${limit}; ignored as a command`;
}

export function logLimitMarker(limit: number): string {
  return `rq: stdio.log reached max_log_bytes (${limit} bytes this run); later output was not written`;
}

/**
 * The script writes stdio.log itself (stdout and stderr are the file, never a pipe through the
 * queue), so the size limit is enforced by the kernel: the launcher sets RLIMIT_FSIZE to
 * `sizeLimit` in the child, with SIGXFSZ ignored, and writes past it fail with EFBIG. rq only
 * appends its markers, after the script's writes so far (O_APPEND), and checks the size at the end.
 */
export class RunLog {
  private writes: Promise<void> = Promise.resolve();

  private constructor(
    readonly file: string,
    readonly fd: number,
    /** The file size at which this run's output stops, or null without a limit. */
    readonly sizeLimit: number | null,
    private readonly bounds: OutputBounds,
    private readonly log: Logger,
  ) {}

  /** Opens stdio.log for append; the limit counts from its size now, so a retry gets its own. */
  static open(jobDir: string, bounds: OutputBounds, log: Logger): RunLog {
    const file = path.join(jobDir, 'stdio.log');
    // openOwnSync: a FIFO a previous run left as stdio.log would otherwise hold the queue here for good.
    const fd = openOwnSync(nodeSpoolFs, file, APPEND);
    const sizeLimit = bounds.maxLogBytes === undefined ? null : fs.fstatSync(fd).size + bounds.maxLogBytes;
    return new RunLog(file, fd, sizeLimit, bounds, log);
  }

  /** The launcher has its own copy of the fd. */
  closeFd(): void {
    fs.closeSync(this.fd);
  }

  /** An fd 3 line over max_line_bytes was dropped: one marker line and a warning. */
  lineCut(bytes: number): void {
    const text = cutLineMarker(bytes, this.bounds.maxLineBytes);
    this.log.warn({ bytes, max_line_bytes: this.bounds.maxLineBytes }, text);
    this.append(text);
  }

  /**
   * Once the script is gone: a log at its limit says so. One past it (the child_process launcher
   * without prlimit cannot set the limit, or rq's markers pushed it over) is cut back to it first.
   * Resolves when every marker is written; a failed write is logged, never thrown.
   */
  async close(): Promise<void> {
    await this.writes;
    const limit = this.sizeLimit;
    if (limit === null) return;
    try {
      const size = (await fsp.stat(this.file)).size;
      if (size < limit) return;
      if (size > limit) await fsp.truncate(this.file, limit);
      const text = logLimitMarker(this.bounds.maxLogBytes!);
      this.log.warn({ max_log_bytes: this.bounds.maxLogBytes, size }, text);
      await fsp.appendFile(this.file, `\n${text}\n`);
    } catch (err) {
      // Gone with its message (a purge): nothing left to bound.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      this.log.warn({ err, file: this.file }, 'could not check stdio.log against max_log_bytes');
    }
  }

  private append(text: string): void {
    this.writes = this.writes
      .then(() => fsp.appendFile(this.file, `\n${text}\n`))
      .catch((err: unknown) => this.log.warn({ err, file: this.file }, 'could not write a marker to stdio.log'));
  }
}
