// pino setup: the logger root. rq-mgr logs to log/ (or stdout in the foreground); its children
// log to their stdout, which rq-mgr points at the same place; the CLI logs to stderr. JSON lines,
// or one readable line each on a terminal (log-format.ts).
import tty from 'node:tty';
import pino, { type Logger } from 'pino';
import { LogDestination } from './log-destination.js';
import { logFormat, prettyLine } from './log-format.js';

export type { Logger };

export interface LogOptions {
  /** Absolute file to append to; when omitted, `fd` (default 2, stderr). */
  file?: string;
  fd?: 1 | 2;
  level?: string;
  /**
   * The level when the lines go to a terminal (pretty) and neither `level` nor `RQ_LOG_LEVEL` says:
   * rq-mgr's children pass `warn`, so a terminal shows rq-mgr's few lines and every warning.
   */
  terminalLevel?: string;
  name: string;
}

/**
 * A logger whose destination drops what it cannot write (LogDestination): logging never blocks
 * or ends a daemon, and the lines a full disk cost are counted in one warning once it has room.
 */
export function createLogger(opts: LogOptions): Logger {
  const fd = opts.file === undefined ? (opts.fd ?? 2) : undefined;
  const pretty = logFormat(fd) === 'pretty';
  const level = opts.level ?? process.env.RQ_LOG_LEVEL ?? (pretty ? opts.terminalLevel : undefined) ?? 'info';
  const dest = LogDestination.open(opts.file ?? opts.fd ?? 2);
  if (pretty) dest.format = prettyLine(process.env.NO_COLOR === undefined && fd !== undefined && tty.isatty(fd));
  const log = pino({ name: opts.name, level, base: { pid: process.pid } }, dest);
  dest.recovered = (dropped) => log.warn({ dropped }, `log writes failed: ${dropped} lines dropped`);
  return log;
}

/** A logger that drops everything, for library callers (tests, benchmarks) that pass no logger. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
