// Tag routes (rq-beyond §B9, §B1.11): tag a message, one queue's tags and tagged pages, lookups across queues, /tracked.json, cancel_tagged.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { invalidField } from '../../errors.js';
import { TRACK_TAG } from '../../message/tags.js';
import { type Params, textParam } from '../params.js';
import { pathParam } from '../request-params.js';
import { readTagPage, requireTag, tagListParam, taggedEverywhere } from '../tag-lookup.js';
import { html } from '../views/html.js';
import { tagView } from '../views/tags-view.js';
import { type WebContext, notice } from '../web-context.js';
import { webActor } from './lifecycle-api.js';

/** `<tag>.json` is the JSON answer, `<tag>` the HTML view; `x_format=html` reaches the view of a tag that ends in `.json`. */
function tagSegment(ctx: WebContext, req: FastifyRequest): { tag: string; json: boolean } {
  const seg = pathParam(req, 'tag');
  const query = req.query as Record<string, unknown>;
  const json = seg.endsWith('.json') && query.x_format !== 'html';
  // Before the tag is checked, so a JSON client's refusal is JSON too.
  if (json) ctx.markJson(req);
  return { tag: requireTag(json ? seg.slice(0, -5) : seg), json };
}

const REASON_EXPECTED = 'text of at most 1000 characters without NUL';

export function tagApi(ctx: WebContext) {
  const actor = (req: FastifyRequest) => webActor(req, Boolean(ctx.deps.config.basic_auth));

  return {
    /** POST /q/<q>/<id>/tags: `add`, `remove` (comma-separated or arrays). JSON: the queue's reply; HTML: a flash and 303. */
    async tagMessage(req: FastifyRequest, reply: FastifyReply) {
      const { p, json } = await ctx.actionParams(req);
      const url = pathParam(req, 'q');
      const q = await ctx.requireRoutedQueue(url);
      const id = ctx.requireMsgId(pathParam(req, 'id'));
      // Checked here first, with the queue's texts: a bad list never reaches the socket.
      const add = tagListParam(p, 'add');
      const remove = tagListParam(p, 'remove');
      const r = await ctx.queue(q).tagMessage(id, { add, remove, actor: actor(req) });
      if (json) return ctx.answerJson(reply, r);
      if (!r.ok) return ctx.couldNot(reply, r, 'tag message');
      const flash = notice(html`Tags updated: ${r.value.length ? r.value.join(', ') : 'none'}`);
      return ctx.redirect(reply, ctx.urls.back(req, textParam(p, 'back'), ctx.urls.msg(url, id)), flash);
    },

    /** POST /q/<q>/cancel_tagged: `tag`, `reason`. JSON `["ok", <count>]`; HTML the flash `<n> messages cancelled` and 303 to `back` or the queue page. */
    async cancelTagged(req: FastifyRequest, reply: FastifyReply) {
      const { p, json } = await ctx.actionParams(req);
      const url = pathParam(req, 'q');
      const q = await ctx.requireRoutedQueue(url);
      const tag = requireTag(p.tag);
      const reason: unknown = p.reason;
      if (reason !== undefined && reason !== null && typeof reason !== 'string') throw invalidField('reason', REASON_EXPECTED, reason);
      const r = await ctx.queue(q).cancelTagged(tag, { reason: reason || undefined, actor: actor(req) });
      if (json) return ctx.answerJson(reply, r);
      if (!r.ok) return ctx.couldNot(reply, r, 'cancel tagged messages');
      return ctx.redirect(reply, ctx.urls.back(req, textParam(p, 'back'), ctx.urls.queue(url)), notice(html`${r.value} messages cancelled`));
    },

    /** GET /q/<q>/tags.json: how many of the queue's messages carry each tag. */
    async queueTagsJson(req: FastifyRequest, reply: FastifyReply) {
      ctx.markJson(req);
      const q = await ctx.requireRoutedQueue(pathParam(req, 'q'));
      return ctx.answerValue(reply, await ctx.queue(q).tags());
    },

    /** GET /q/<q>/tags/<tag>.json (the queue's page) and GET /q/<q>/tags/<tag> (its HTML view, with cancel_tagged). */
    async queueTagged(req: FastifyRequest, reply: FastifyReply) {
      const url = pathParam(req, 'q');
      const { tag, json } = tagSegment(ctx, req);
      const q = await ctx.requireRoutedQueue(url);
      const page = readTagPage(req.query as Params, false);
      const r = await ctx.queue(q).tagged({ tag, ...page });
      if (json) return ctx.answerValue(reply, r);
      if (!r.ok) return ctx.couldNot(reply, r, 'look up tag');
      const messages = r.value.messages.map((m) => ({ ...m, queue: url }));
      const gone = (r.value.gone ?? []).map((id) => `${url}/${id}`);
      return ctx.page(req, reply, tagView({ tag, queue: url, total: r.value.total, messages, page, unavailable: [], gone }, ctx.urls), {
        queue: url,
        scripts: ['main.js'],
      });
    },

    /** GET /tags/<tag>.json and GET /tags/<tag>: every queue's messages with the tag, most recently tagged first. */
    async tagged(req: FastifyRequest, reply: FastifyReply) {
      const { tag, json } = tagSegment(ctx, req);
      const page = readTagPage(req.query as Params, true);
      const found = await taggedEverywhere(ctx, tag, page);
      if (json) return ctx.json(reply, found);
      return ctx.page(req, reply, tagView({ tag, ...found, page }, ctx.urls));
    },

    /** GET /tracked.json: `{"messages", "expired", "total", "unavailable"}` of the tag `track` across queues (§B9.4). */
    async trackedJson(req: FastifyRequest, reply: FastifyReply) {
      ctx.markJson(req);
      const page = readTagPage(req.query as Params, true);
      const { total, messages, gone, unavailable } = await taggedEverywhere(ctx, TRACK_TAG, page);
      reply.header('Cache-Control', 'no-store');
      return ctx.json(reply, { messages, expired: gone, total, unavailable });
    },
  };
}
