// Asks this root's rq-mgr about the fleet (`rq fleet`, `rq queues --fleet`, `rq fleet --forget`): rq-mgr not running is said as such (exit 3), not as a bare missing reply.
import { rootPaths } from '../config/paths.js';
import { isRqError } from '../errors.js';
import type { Answer } from '../ipc/answer.js';
import type { FleetView } from '../ipc/fleet-reply.js';
import { MgrClient } from '../ipc/mgr-client.js';
import { refuseIfMgrDown } from './mgr-down.js';

async function askMgr<T>(root: string, call: (c: MgrClient) => Promise<Answer<T>>): Promise<Answer<T>> {
  try {
    return await call(new MgrClient(rootPaths(root).mgrSock));
  } catch (err) {
    if (isRqError(err, 'RQ_ERR_NO_REPLY')) await refuseIfMgrDown(root);
    throw err;
  }
}

export const askFleet = (root: string): Promise<Answer<FleetView>> => askMgr(root, (c) => c.fleet());

export const forgetHost = (root: string, host: string): Promise<Answer<string>> => askMgr(root, (c) => c.fleetForget(host));
