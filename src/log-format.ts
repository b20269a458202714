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

/** The options pino-pretty's prettyFactory takes here (its types are not needed at build time). */
interface PrettyOptions {
  colorize: boolean;
  singleLine: boolean;
  translateTime: string;
  ignore: string;
}

/**
 * Turns one of pino's JSON lines into `HH:MM:ss INFO (rq-mgr): queue created {"queue":"cleaner"}`.
 * pino-pretty is loaded here, when a terminal asks for it, and not bundled: the daemons' bundles
 * (tools/bundle-daemons.mjs) and every process that logs JSON do without it. It runs in the
 * logging process, synchronously, in front of LogDestination (not as a pino transport, which would
 * be a worker thread per process, and one the bundles could not find).
 */
export function prettyLine(colorize: boolean): (line: string) => string {
  // A require made at run time, which esbuild leaves alone: the module is found from this file's place (dist/ or src/), in node_modules.
  const load = createRequire(import.meta.url);
  const { prettyFactory } = load('pino-pretty') as { prettyFactory: (o: PrettyOptions) => (line: string) => string };
  const pretty = prettyFactory({ colorize, singleLine: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' });
  return (line) => pretty(line);
}
