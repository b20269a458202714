// GET /metrics (rq-beyond §B16): a scrape of rq-mgr and every queue, answered in the Prometheus text format.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { discoverQueues } from '../../mgr/queue-dirs.js';
import type { WebContext } from '../web-context.js';
import { CONTENT_TYPE, exposition } from './exposition.js';
import { scrapeFamilies } from './scrape.js';

export function metricsRoute(ctx: WebContext) {
  return async (_req: FastifyRequest, reply: FastifyReply) => {
    const families = await scrapeFamilies({
      mgr: ctx.deps.mgr,
      queue: (name) => ctx.queue(name),
      discover: () => discoverQueues(ctx.deps.root),
      limitsFile: ctx.paths.limitsFile,
      log: ctx.log,
    });
    // Figures change from one scrape to the next; no cache may answer for the processes.
    return reply
      .code(200)
      .type(CONTENT_TYPE)
      .header('cache-control', 'no-store')
      .send(await exposition(families));
  };
}
