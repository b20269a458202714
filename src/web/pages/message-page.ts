// GET /q/<q>/<id> (R): the message page, or the prep page while it is being assembled (message.js keeps it live, confirm.js asks the confirmations).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { getMessage } from '../message-files.js';
import { pathParam } from '../request-params.js';
import { messageView } from '../views/message-view.js';
import type { WebContext } from '../web-context.js';

export function messagePage(ctx: WebContext) {
  return async function message(req: FastifyRequest, reply: FastifyReply, idParam: string) {
    const url = pathParam(req, 'q');
    const q = await ctx.requireRoutedQueue(url);
    const id = ctx.requireMsgId(idParam);
    const msg = await getMessage(ctx, q, id);
    // The timeline is a courtesy: a message deleted meanwhile still shows what was read.
    const history = await ctx
      .queue(q)
      .history(id)
      .catch(() => null);
    return ctx.page(req, reply, messageView(msg, url, ctx.urls, history?.ok ? history.value : [], q), { queue: url, scripts: ['message.js'] });
  };
}
