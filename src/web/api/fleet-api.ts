// GET /fleet.json: the fleet this host is in, as rq-mgr sees it from etcd (every host, up or gone, with its queues); 404 on a host without a fleet.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RqError, isRqError } from '../../errors.js';
import type { WebContext } from '../web-context.js';

export function fleetApi(ctx: WebContext) {
  return async function fleetJson(req: FastifyRequest, reply: FastifyReply) {
    ctx.markJson(req);
    reply.header('Cache-Control', 'no-store');
    try {
      return ctx.answerValue(reply, await ctx.deps.mgr.fleet());
    } catch (err) {
      if (!isRqError(err, 'RQ_ERR_NO_REPLY')) throw err;
      throw RqError.of('RQ_ERR_NO_REPLY', `rq-mgr did not answer fleet (${err.message})`);
    }
  };
}
