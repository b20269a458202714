// Why the web cannot listen where config.json says, in words an operator acts on: the port another program holds and the command that picks another.
import { rootPaths } from '../config/paths.js';
import { PACKAGE_DIR } from '../config/root.js';
import type { ParentReport } from '../daemon.js';

/** `bin/rq-install <args> --force`, with `--root` unless the root is this installation's own. */
function installCommand(root: string, args: string): string {
  return `bin/rq-install ${args} --force${root === PACKAGE_DIR ? '' : ` --root ${root}`}`;
}

/**
 * The problem rq-mgr says once and `rq doctor` lists: a busy port (EADDRINUSE), a port below 1024
 * (EACCES), an address not on this machine (EADDRNOTAVAIL), else the system's own words.
 */
export function listenProblem(err: NodeJS.ErrnoException, host: string, port: number, root: string): Extract<ParentReport, { rq: 'problem' }> {
  const config = rootPaths(root).configFile;
  // Queues read the port for full message ids when they start: a new port reaches them with a restart.
  const again = 'the web tries again by itself (at least every 30 s); after a change of port, bin/rq-mgr restart makes message ids carry it';
  const key = `listen ${err.code ?? 'error'} ${host}:${port}`;
  switch (err.code) {
    case 'EADDRINUSE':
      return {
        rq: 'problem',
        key,
        reason: `port ${port} on ${host} is in use by another program`,
        fix: `choose another with ${installCommand(root, '--port N')} (or set "port" in ${config}); ${again}`,
      };
    case 'EACCES':
      return {
        rq: 'problem',
        key,
        reason: `port ${port} on ${host} needs privileges this user does not have`,
        fix: `choose a port above 1023 with ${installCommand(root, '--port N')} (or set "port" in ${config}); ${again}`,
      };
    case 'EADDRNOTAVAIL':
      return {
        rq: 'problem',
        key,
        reason: `address ${host} is not one of this machine's, so the web cannot listen on it`,
        fix: `choose one with ${installCommand(root, '--addr 127.0.0.1')} (or set "addr" in ${config}); ${again}`,
      };
    default:
      return {
        rq: 'problem',
        key,
        reason: `the web cannot listen on ${host}:${port}: ${err.message}`,
        fix: `correct "addr" and "port" in ${config}; ${again}`,
      };
  }
}
