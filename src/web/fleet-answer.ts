// rq-mgr's fleet view as GET /fleet.json and GET /fleet ask for it: its answer, or RQ_ERR_NO_REPLY saying which command went unanswered.
import { RqError, isRqError } from '../errors.js';
import type { Answer } from '../ipc/answer.js';
import type { FleetView } from '../ipc/fleet-reply.js';
import type { WebContext } from './web-context.js';

/** The fleet this host is in (a refusal with RQ_ERR_NO_FLEET on a host without one); throws RQ_ERR_NO_REPLY while rq-mgr does not answer. */
export async function fleetAnswer(ctx: WebContext): Promise<Answer<FleetView>> {
  try {
    return await ctx.deps.mgr.fleet();
  } catch (err) {
    if (!isRqError(err, 'RQ_ERR_NO_REPLY')) throw err;
    throw RqError.of('RQ_ERR_NO_REPLY', `rq-mgr did not answer fleet (${err.message})`);
  }
}
