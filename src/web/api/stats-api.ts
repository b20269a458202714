// Statistics as JSON (rq-beyond §B15.3, §B15.4): GET /q/<q>/stats.json and GET /q/<q>/failed.json, read-only and answered while the queue is DOWN.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RqError } from '../../errors.js';
import type { FailureGroupPage, FailureGroups } from '../../ipc/stats-reply.js';
import type { Params } from '../params.js';
import { pathParam } from '../request-params.js';
import { failedParams, statsDateParam } from '../stats-params.js';
import { withQuantiles } from '../stats-series.js';
import type { Urls } from '../urls.js';
import type { WebContext } from '../web-context.js';

/** A group's page with each message's page path (relative_root included), so a client can link to it. */
export type FailedJson = FailureGroups | (FailureGroupPage & { messages: (FailureGroupPage['messages'][number] & { url: string })[] });

export function withMessageUrls(v: FailureGroups | FailureGroupPage, q: string, urls: Urls): FailedJson {
  if (!('messages' in v)) return v;
  return { ...v, messages: v.messages.map((m) => ({ ...m, url: urls.msg(q, m.msg_id) })) };
}

/**
 * The queue of a JSON statistics route, or null once a 404 JSON refusal is sent: a JSON client gets
 * JSON for an unknown queue too (the classic routes' HTML Not Found page is kept where the spec has it).
 */
export async function queueOrRefuse(ctx: WebContext, req: FastifyRequest, reply: FastifyReply, name = pathParam(req, 'q')): Promise<string | null> {
  ctx.markJson(req);
  try {
    return await ctx.requireQueue(name);
  } catch (err) {
    if (!(err instanceof RqError) || err.code !== 'RQ_ERR_QUEUE_NOT_FOUND') throw err;
    ctx.json(reply, ['fail', err.message], err.status);
    return null;
  }
}

export function statsApi(ctx: WebContext) {
  return {
    /** GET /q/<q>/stats.json?date=YYYYMMDD: the queue's `stats` reply, `wait` and `run` each with p50/p95/p99 (null when unknown). */
    async statsJson(req: FastifyRequest, reply: FastifyReply) {
      const q = await queueOrRefuse(ctx, req, reply);
      if (q === null) return reply;
      const date = statsDateParam(req.query as Params);
      const r = await ctx.queue(q).stats(date);
      if (!r.ok) return ctx.answerJson(reply, r);
      reply.header('Cache-Control', 'no-store');
      return ctx.json(reply, withQuantiles(r.value));
    },

    /** GET /q/<q>/failed.json[?group=G&offset=&limit=]: the failure groups, or a page of one group's messages, newest first. */
    async failedJson(req: FastifyRequest, reply: FastifyReply) {
      const q = await queueOrRefuse(ctx, req, reply);
      if (q === null) return reply;
      const query = failedParams(req.query as Params);
      const r = await ctx.queue(q).failed(query.group === undefined ? {} : query);
      if (!r.ok) return ctx.answerJson(reply, r);
      reply.header('Cache-Control', 'no-store');
      return ctx.json(reply, withMessageUrls(r.value, q, ctx.urls));
    },
  };
}
