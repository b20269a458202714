// pino setup: the logger root; daemons log JSON to a file under log/, the CLI to stderr.
import pino, { type Logger } from 'pino';

export type { Logger };

export interface LogOptions {
  /** Absolute file to append to; omitted means stderr. */
  file?: string;
  level?: string;
  name: string;
}

export function createLogger(opts: LogOptions): Logger {
  const level = opts.level ?? process.env.RQ_LOG_LEVEL ?? 'info';
  const dest = opts.file ? pino.destination({ dest: opts.file, mkdir: true, sync: false }) : pino.destination(2);
  return pino({ name: opts.name, level, base: { pid: process.pid } }, dest);
}

/** A logger that drops everything, for library callers (tests, benchmarks) that pass no logger. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
