// How a daemon's log lines look: pino-pretty's one-line text on a terminal that a person reads, pino's JSON lines everywhere else.
import { createRequire } from 'node:module';
import tty from 'node:tty';

export type LogFormat = 'json' | 'pretty';

/**
 * `RQ_LOG_FORMAT=json|pretty` says; otherwise pretty when `fd` is a terminal (`npm start`,
 * `bin/rq-mgr run` by hand), JSON when it is a file or a pipe (rq-mgr as a daemon, systemd, tools).
 */
export function logFormat(fd: number | undefined, env: NodeJS.ProcessEnv = process.env): LogFormat {
  const asked = env.RQ_LOG_FORMAT;
  if (asked === 'json' || asked === 'pretty') return asked;
  return fd !== undefined && tty.isatty(fd) ? 'pretty' : 'json';
}

type LogRecord = Record<string, unknown>;

/** The options pino-pretty's prettyFactory takes here (its types are not needed at build time). */
interface PrettyOptions {
  colorize: boolean;
  singleLine: boolean;
  translateTime: string;
  ignore: string;
  hideObject: boolean;
  messageFormat: (log: LogRecord, messageKey: string) => string;
}

/** Fields every line has (shown by pino-pretty itself, or nobody's business on a terminal). */
const NOT_SHOWN = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg', 'v', 'queue_name_max']);
/** A value longer than this is cut on a terminal (the JSON log keeps it whole). */
const VALUE_MAX = 120;

/** `queue=hello`, `queues=a,b,c`, `err="listen EADDRINUSE …"`: short enough to read on one line. */
function shortValue(v: unknown): string {
  let text: string;
  if (Array.isArray(v) && v.every((e) => typeof e === 'string' || typeof e === 'number')) text = v.join(',');
  else if (typeof v === 'string') text = /[\s="]/.test(v) || v === '' ? JSON.stringify(v) : v;
  else text = JSON.stringify(v) ?? String(v);
  return text.length > VALUE_MAX ? `${text.slice(0, VALUE_MAX - 1)}…` : text;
}

/** The message, then each other field as key=value; a queue process's own `queue` is in its name already. */
export function messageWithFields(log: LogRecord, messageKey = 'msg'): string {
  const name = typeof log.name === 'string' ? log.name : '';
  const fields = Object.entries(log)
    .filter(
      ([k, v]) =>
        !NOT_SHOWN.has(k) && k !== messageKey && v !== undefined && !(Array.isArray(v) && v.length === 0) && !(k === 'queue' && name === `rq-que ${String(v)}`),
    )
    .map(([k, v]) => `${k}=${shortValue(v)}`);
  return [String(log[messageKey] ?? ''), ...fields].filter((s) => s !== '').join(' ');
}

/**
 * What a terminal shows of a stop: its `stopping` line and its last `stopped`; in between, the
 * bookkeeping lines (each worker stopped, FINAL SHUTDOWN) are left to the JSON log, warnings stay.
 */
function stopFilter(): (log: LogRecord) => boolean {
  let stopping = false;
  return (log) => {
    const level = Number(log.level) || 0;
    if (log.msg === 'stopping' && log.worker === undefined) {
      const shown = !stopping;
      stopping = true;
      return shown;
    }
    if (!stopping || level >= 40) return true;
    return log.msg === 'stopped' && log.worker === undefined;
  };
}

/**
 * Turns one of pino's JSON lines into `[HH:MM:ss] INFO (rq-mgr): queue created queue=cleaner`, or
 * '' for a line a terminal leaves out (stopFilter). pino-pretty is loaded here, when a terminal
 * asks for it, and not bundled: the daemons' bundles (tools/bundle-daemons.mjs) and every process
 * that logs JSON do without it. It runs in the logging process, synchronously, in front of
 * LogDestination (not as a pino transport, which would be a worker thread per process, and one
 * the bundles could not find).
 */
export function prettyLine(colorize: boolean): (line: string) => string {
  // A require made at run time, which esbuild leaves alone: the module is found from this file's place (dist/ or src/), in node_modules.
  const load = createRequire(import.meta.url);
  const { prettyFactory } = load('pino-pretty') as { prettyFactory: (o: PrettyOptions) => (line: string | LogRecord) => string };
  const pretty = prettyFactory({
    colorize,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname',
    hideObject: true,
    messageFormat: messageWithFields,
  });
  const shown = stopFilter();
  return (line) => {
    let log: LogRecord;
    try {
      log = JSON.parse(line) as LogRecord;
    } catch {
      return pretty(line);
    }
    if (!shown(log)) return '';
    const text = pretty(log);
    return text.endsWith('\n') ? text : `${text}\n`;
  };
}
