// When no queue of a root answers, whether rq-mgr is the reason: one line naming its socket and how to start it, instead of one line per queue.
import { RqError, isRqError } from '../errors.js';
import { rootPaths } from '../config/paths.js';
import { PACKAGE_DIR } from '../config/root.js';
import { MgrClient } from '../ipc/mgr-client.js';

/** rq-mgr answers ping at once; a missing socket fails at connect, long before this. */
const PING_TIMEOUT_MS = 2000;

/** `bin/rq-mgr start`, with `--root` unless the root is this installation's own. */
function startCommand(root: string): string {
  return root === PACKAGE_DIR ? 'bin/rq-mgr start' : `bin/rq-mgr start --root ${root}`;
}

/**
 * Throws RQ_ERR_MGR_NOT_RUNNING when rq-mgr does not answer on the root's control socket; returns
 * when it does (then the queues that did not answer are each worth naming).
 */
export async function refuseIfMgrDown(root: string): Promise<void> {
  const sock = rootPaths(root).mgrSock;
  try {
    await new MgrClient(sock, PING_TIMEOUT_MS).ping();
  } catch (err) {
    if (isRqError(err, 'RQ_ERR_NO_REPLY')) throw RqError.of('RQ_ERR_MGR_NOT_RUNNING', sock, startCommand(root));
    // Any other answer, even one not understood: something is there, and the queues are worth naming.
  }
}
