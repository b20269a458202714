// Asks this root's rq-mgr for the fleet view (`rq fleet`, `rq queues --fleet`): rq-mgr not running is said as such (exit 3), not as a bare missing reply.
import { rootPaths } from '../config/paths.js';
import { isRqError } from '../errors.js';
import type { Answer } from '../ipc/answer.js';
import type { FleetView } from '../ipc/fleet-reply.js';
import { MgrClient } from '../ipc/mgr-client.js';
import { refuseIfMgrDown } from './mgr-down.js';

export async function askFleet(root: string): Promise<Answer<FleetView>> {
  try {
    return await new MgrClient(rootPaths(root).mgrSock).fleet();
  } catch (err) {
    if (isRqError(err, 'RQ_ERR_NO_REPLY')) await refuseIfMgrDown(root);
    throw err;
  }
}
