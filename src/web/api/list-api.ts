// GET /q/<q>/messages.json: one page of the queue's message list (the queue page's table) as JSON, every filter a checked query parameter.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { listFilter } from '../list-params.js';
import { listPage } from '../message-list.js';
import { queueOrRefuse } from './stats-api.js';
import type { WebContext } from '../web-context.js';

export function listApi(ctx: WebContext) {
  return {
    async messagesJson(req: FastifyRequest, reply: FastifyReply) {
      const q = await queueOrRefuse(ctx, req, reply);
      if (q === null) return reply;
      const f = listFilter(req.query as Record<string, unknown>);
      const r = await listPage(ctx, q, f);
      if (!r.ok) return ctx.answerJson(reply, r.refusal);
      reply.header('X-Total-Count', String(r.page.total));
      return ctx.json(reply, { total: r.page.total, offset: f.offset, limit: f.limit, messages: r.page.rows });
    },
  };
}
