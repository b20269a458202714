// pino setup: the logger root. rq-mgr logs to log/ (or stdout in the foreground); its children
// log to their stdout, which rq-mgr points at the same place; the CLI logs to stderr.
import pino, { type Logger } from 'pino';

export type { Logger };

export interface LogOptions {
  /** Absolute file to append to; when omitted, `fd` (default 2, stderr). */
  file?: string;
  fd?: 1 | 2;
  level?: string;
  name: string;
}

export function createLogger(opts: LogOptions): Logger {
  const level = opts.level ?? process.env.RQ_LOG_LEVEL ?? 'info';
  const dest = opts.file ? pino.destination({ dest: opts.file, mkdir: true, sync: false }) : pino.destination(opts.fd ?? 2);
  return pino({ name: opts.name, level, base: { pid: process.pid } }, dest);
}

/** A logger that drops everything, for library callers (tests, benchmarks) that pass no logger. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
