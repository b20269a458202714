// `npm start`: installs a default root in the checkout on first run, then runs rq-mgr in the foreground.
import fs from 'node:fs';
import { rootPaths } from '../config/paths.js';
import { resolveRoot } from '../config/root.js';
import { main as install } from './rq-install.js';
import { parseArgs } from '../args.js';

const HELP = `rq-start (npm start): install a default rq root on first run, then run rq-mgr in the foreground

Usage: npm start [-- --root DIR]    (or bin/rq-start [--root DIR])

The first run writes config/config.json and links the built-in queues (as rq-install does); every run
then supervises the root's queues, web server and timers until Ctrl-C.

Options:
  --root DIR   the rq root (default: $RQ_ROOT, else this checkout)
  -h, --help   print this help and exit 0

Example:
  $ npm start`;

export async function main(argv: string[]): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const { opts, rest } = parseArgs(['start', ...argv]);
  const unknown = Object.keys(opts).find((k) => k !== 'root');
  if (unknown !== undefined || rest.length > 0 || opts.root === true) {
    const what =
      unknown !== undefined && opts.root !== true
        ? `unknown option --${unknown}`
        : rest.length > 0
          ? `unexpected argument ${JSON.stringify(rest[0])}`
          : '--root: expected a directory path, received no value';
    process.stderr.write(`rq-start: ${what}; usage: npm start [-- --root DIR] (rq-start --help)\n`);
    return 2;
  }
  const root = resolveRoot(typeof opts.root === 'string' ? opts.root : undefined);
  // npm start's own lines for a person go to stderr: piped, stdout holds rq-mgr's JSON log lines and nothing else.
  const say = (line: string) => process.stderr.write(`${line}\n`);
  if (!fs.existsSync(rootPaths(root).configFile)) {
    const code = await install(['--root', root], { stdout: say, stderr: say, env: process.env });
    if (code !== 0) return code;
  }
  const { runMgr } = await import('../mgr/mgr-main.js');
  return runMgr({
    root,
    // Once this process is the root's rq-mgr: a second npm start says only that one runs already.
    claimed: () => say(`rq: root ${root}; starting (Ctrl-C stops)`),
    started: ({ url, problem }) =>
      // The fix too: piped, the only other place it is said is a JSON line.
      say(url ? `rq: ready: web UI ${url}` : `rq: ready, without the web UI${problem ? `: ${problem.reason}; ${problem.fix}` : ' (not up yet)'}`),
  });
}
