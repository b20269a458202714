// A pino logger whose lines a test reads back, parsed: what the code under test told its operator, at which level.
import pino, { type Level, type Logger } from 'pino';

/** One logged line: pino's level number (30 info, 40 warn, 50 error), its message, and its other fields. */
export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** A logger at `level` (debug unless told) and the lines it has written so far, in order. */
export function capturedLog(level: Level = 'debug'): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const log = pino({ level }, { write: (s: string) => void lines.push(JSON.parse(s) as LogLine) });
  return { log, lines };
}
