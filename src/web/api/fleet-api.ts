// GET /fleet.json: the fleet this host is in, as rq-mgr sees it from etcd (every host, up or gone, with its queues); 404 on a host without a fleet.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { fleetAnswer } from '../fleet-answer.js';
import type { WebContext } from '../web-context.js';

export function fleetApi(ctx: WebContext) {
  return async function fleetJson(req: FastifyRequest, reply: FastifyReply) {
    ctx.markJson(req);
    reply.header('Cache-Control', 'no-store');
    return ctx.answerValue(reply, await fleetAnswer(ctx));
  };
}
