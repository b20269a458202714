// check_rq: Nagios-style probe of an rq host's queues over HTTP (spec §10.2), without the classic crash.
import fs from 'node:fs';
import http from 'node:http';
import { RqError, isRqError, shown } from '../errors.js';
import { readCheckArgs } from './check-rq-options.js';

const USAGE = `check_rq: Nagios-style probe of an rq host's queues over HTTP (/q.txt and each /q/<queue>.txt)

usage: check_rq [-s|--server HOST] [-p|--port PORT] [-t|--thresh a:b:c:d] [-u|--user NAME:PASSWORD | --user-file FILE] [-d|--dump] [-h]

Options:
  -s, --server HOST        the rq web server's host (default localhost)
  -p, --port PORT          its port (default $RQ_PORT, else 3333)
  -t, --thresh a:b:c:d     a/b: prep+que+run at which to warn/go critical (default 25:40)
                           c/d: done or relayed at which to warn/go critical (default 3000:3500)
  -u, --user NAME:PASSWORD basic auth for the web server (seen by every user of the host in ps: prefer --user-file)
      --user-file FILE     the same, read from the first line of FILE, which only its owner may read (chmod 600)
  -d, --dump               print each queue's figures as they are read
  -h, --help               print this help and exit 0

Exit: 0 OK, 1 WARNING, 2 CRITICAL (a queue not UP, errors, too many messages, the host unreachable or
its answer not 200), 3 UNKNOWN (the command line: an unknown option, a stray word, a bad or missing value).

Example:
  $ check_rq -s rq.example.com -p 3333 -t 50:100:5000:8000`;

export interface Thresholds {
  warnActive: number;
  critActive: number;
  warnDone: number;
  critDone: number;
}

export type QueueStats = Record<string, string>;

/** `key: value` lines of a /q/<q>.txt page. */
export function parseStatusText(text: string): QueueStats {
  const out: QueueStats = {};
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+): (.*)$/.exec(line.trim());
    if (m) out[m[1]] = m[2];
  }
  return out;
}

export function parseThresholds(text: string): Thresholds | null {
  const parts = text.split(':').map((p) => (/^\d+$/.test(p) ? Number(p) : NaN));
  if (parts.length !== 4 || parts.some((n) => !Number.isInteger(n))) return null;
  // A warning above its critical level would never be given: the critical comes first.
  if (parts[0] > parts[1] || parts[2] > parts[3]) return null;
  return { warnActive: parts[0], critActive: parts[1], warnDone: parts[2], critDone: parts[3] };
}

/** The problems of one queue, split by severity (spec §10.2 rules). */
export function judge(name: string, s: QueueStats, t: Thresholds): { critical: string[]; warning: string[] } {
  const critical: string[] = [];
  const warning: string[] = [];
  if (s.status !== 'UP') {
    critical.push(`${name}: status ${s.status ?? 'unknown'}`);
    return { critical, warning };
  }
  const n = (k: string) => Number(s[k] ?? 0) || 0;
  const active = n('prep') + n('que') + n('run');
  const activeText = `${name}: prep=>${n('prep')} run=>${n('run')} que=>${n('que')}`;
  if (active >= t.critActive) critical.push(activeText);
  else if (active >= t.warnActive) warning.push(activeText);
  if (n('err') > 0) critical.push(`${name}: errors => ${n('err')}`);
  for (const k of ['done', 'relayed']) {
    if (n(k) >= t.critDone) critical.push(`${name}: ${k} => ${n(k)}`);
    else if (n(k) >= t.warnDone) warning.push(`${name}: ${k} => ${n(k)}`);
  }
  return { critical, warning };
}

/** `401 Unauthorized`: the status and its standard reason. */
function statusText(status: number | undefined): string {
  return status === undefined ? 'status unknown' : `${status}${http.STATUS_CODES[status] ? ` ${http.STATUS_CODES[status]}` : ''}`;
}

function fetchText(host: string, port: number, pathname: string, auth: string | undefined, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host, port, path: pathname, auth, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      // The status says which fix applies: 401 a wrong or missing -u / --user-file, 404 another server on the port, 503 a web that is stopping.
      res.on('end', () =>
        res.statusCode === 200 ? resolve(body) : reject(RqError.of('RQ_ERR_FETCH', `Could not Fetch ${pathname}: HTTP ${statusText(res.statusCode)}`)),
      );
    });
    req.on('timeout', () => req.destroy(RqError.of('RQ_ERR_FETCH', `Timed out connecting to ${host}:${port}`)));
    req.on('error', (err) => reject(isRqError(err, 'RQ_ERR_FETCH') ? err : RqError.of('RQ_ERR_FETCH', `Could not connect to ${host}:${port}`)));
  });
}

/** NAME:PASSWORD from the first line of `file`, or why not (the password never quoted): a file others can read is refused, as its secret would not be one. */
function userFromFile(file: string): { user: string } | { why: string } {
  try {
    const mode = fs.statSync(file).mode & 0o777;
    if (mode & 0o077) return { why: `others may read or write ${file} (mode ${mode.toString(8)}); chmod 600 ${file}` };
    const line = fs.readFileSync(file, 'utf8').split('\n')[0].trim();
    if (!/^[^:]+:/.test(line)) return { why: `expected NAME:PASSWORD on the first line of ${file}, received a line without a name and ':'` };
    return { user: line };
  } catch (err) {
    return { why: `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
}

export async function main(argv: string[]): Promise<number> {
  // Nagios reads a plugin's first line and its exit status: a mistyped option or a stray word is UNKNOWN (3), never a silent default (-H HOST would probe localhost).
  const args = readCheckArgs(argv);
  if ('problem' in args) {
    console.log(`UNKNOWN: ${args.problem}`);
    return 3;
  }
  const { opts } = args;
  if (opts.help) {
    console.log(USAGE);
    return 0;
  }
  const host = typeof opts.server === 'string' ? opts.server : 'localhost';
  const portText = opts.port ?? process.env.RQ_PORT ?? '3333';
  const port = Number(portText);
  if (!/^\d+$/.test(String(portText)) || port < 1 || port > 65535) {
    console.log(`UNKNOWN: ${opts.port === undefined ? '$RQ_PORT' : '--port'}: expected a port number 1-65535, received ${shown(portText)}`);
    return 3;
  }
  const t = parseThresholds(typeof opts.thresh === 'string' ? opts.thresh : '25:40:3000:3500');
  if (!t) {
    console.log(
      `UNKNOWN: --thresh: expected four whole numbers warn:crit:warn:crit, each warning at most its critical, received ${JSON.stringify(opts.thresh)}`,
    );
    return 3;
  }
  if (opts['user-file'] !== undefined && opts.user !== undefined) {
    console.log('UNKNOWN: -u and --user-file: give one of them');
    return 3;
  }
  const fromFile = typeof opts['user-file'] === 'string' ? userFromFile(opts['user-file']) : undefined;
  if (fromFile && 'why' in fromFile) {
    console.log(`UNKNOWN: --user-file: ${fromFile.why}`);
    return 3;
  }
  const auth = typeof opts.user === 'string' ? opts.user : fromFile?.user;
  try {
    const list = await fetchText(host, port, '/q.txt', auth, 10_000);
    const names = list
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => /^q\/.+\.txt$/.test(l));
    const critical: string[] = [];
    const warning: string[] = [];
    for (const line of names) {
      const name = line.slice(2, -4);
      const stats = parseStatusText(await fetchText(host, port, `/${line}`, auth, 10_000));
      if (opts.dump) {
        console.log(name);
        for (const [k, v] of Object.entries(stats)) console.log(`  ${k}: ${v}`);
        continue;
      }
      const j = judge(name, stats, t);
      critical.push(...j.critical);
      warning.push(...j.warning);
    }
    if (opts.dump) return 0;
    if (critical.length) {
      console.log(`CRITICAL:  ${[...critical, ...warning].join(', ')}`);
      return 2;
    }
    if (warning.length) {
      console.log(`WARNING:  ${warning.join(', ')}`);
      return 1;
    }
    console.log('OK: all queue tests normal');
    return 0;
  } catch (err) {
    console.log(isRqError(err, 'RQ_ERR_FETCH') ? err.message : `CRITICAL: ${(err as Error).message}`);
    return 2;
  }
}
