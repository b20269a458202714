// GET /q/<q>/messages.json: one page of the queue's message list (the queue page's table) as JSON, every filter a checked query parameter.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RqError } from '../../errors.js';
import { listFilter } from '../list-params.js';
import { listPage } from '../message-list.js';
import { queueOrRefuse } from './stats-api.js';
import type { WebContext } from '../web-context.js';

/** Below the web's 10 s socket timeout: a queue's first read of 100,000 messages takes about 8 s, longer on a loaded machine. */
const FIRST_READ_WAIT_MS = 7000;

export function listApi(ctx: WebContext) {
  return {
    async messagesJson(req: FastifyRequest, reply: FastifyReply) {
      const q = await queueOrRefuse(ctx, req, reply);
      if (q === null) return reply;
      const f = listFilter(req.query as Record<string, unknown>);
      const r = await listPage(ctx, q, f, FIRST_READ_WAIT_MS);
      if (!r.ok) return ctx.answerJson(reply, r.refusal);
      if (r.page.building !== undefined) {
        const busy = RqError.of('RQ_ERR_LIST_READING', q, String(r.page.building));
        return ctx.json(reply.header('Retry-After', '2'), ['fail', busy.message], busy.status);
      }
      reply.header('X-Total-Count', String(r.page.total));
      return ctx.json(reply, { total: r.page.total, offset: f.offset, limit: f.limit, messages: r.page.rows });
    },
  };
}
