// GET /search (brightroll): `name=<q>&query[<field>]=<text>[&exact=1]`, plus `text` (any field), `state`, `offset`, `limit`; a JSON array of messages, or the results page with `x_format=html`.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RqError } from '../../errors.js';
import { nestParams, textParam } from '../params.js';
import { searchView } from '../views/search-view.js';
import { queueOrRefuse } from './stats-api.js';
import type { WebContext } from '../web-context.js';

export function searchApi(ctx: WebContext) {
  return async function search(req: FastifyRequest, reply: FastifyReply) {
    // Rack-style `query[param1]=ear` nests into {query: {param1: 'ear'}}, as brightroll's Sinatra read it.
    const p = nestParams(new URLSearchParams(req.url.split('?')[1] ?? ''));
    const htmlPage = textParam(p, 'x_format') === 'html';
    if (!htmlPage) ctx.markJson(req);
    const name = textParam(p, 'name');
    if (!name) throw RqError.of('RQ_ERR_LACKING_FIELD', 'name');
    const q = htmlPage ? await ctx.requireQueue(name) : await queueOrRefuse(ctx, req, reply, name);
    if (q === null) return reply;
    const text = textParam(p, 'text');
    // The queue checks every value and names what it refuses.
    const r = await ctx.queue(q).search({ query: p.query, text: p.text, exact: p.exact, state: p.state, offset: p.offset, limit: p.limit });
    if (!r.ok) return htmlPage ? ctx.couldNot(reply, r, 'search') : ctx.answerJson(reply, r);
    const offset = Number(textParam(p, 'offset') ?? 0);
    const limit = Number(textParam(p, 'limit') ?? 100);
    if (htmlPage)
      return ctx.page(req, reply, searchView({ queue: q, text: text ?? '', state: textParam(p, 'state'), offset, limit, page: r.value }, ctx.urls), {
        queue: q,
      });
    reply.header('X-Total-Count', String(r.value.total));
    return ctx.json(
      reply,
      r.value.messages.map((m) => ({ ...m.fields, msg_id: m.msg_id, state: m.state, ...(m.acked ? { acked: true } : {}) })),
    );
  };
}
