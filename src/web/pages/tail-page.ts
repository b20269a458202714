// GET /q/<q>/<id>/tailviewlog/<file> and /tailview/<name> (R): the live tail page.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { getMessage, requireFileName } from '../message-files.js';
import { pathParam } from '../request-params.js';
import { html } from '../views/html.js';
import { idText } from '../views/id-text.js';
import { tailView } from '../views/tail-view.js';
import type { WebContext } from '../web-context.js';

export function tailPages(ctx: WebContext) {
  async function render(req: FastifyRequest, reply: FastifyReply, kind: 'log' | 'attach') {
    const url = pathParam(req, 'q');
    const q = await ctx.requireRoutedQueue(url);
    const id = ctx.requireMsgId(pathParam(req, 'id'));
    const name = requireFileName(pathParam(req, kind === 'log' ? 'file' : 'name'), kind === 'log' ? 'Log file' : 'Attachment');
    await getMessage(ctx, q, id);
    const file = encodeURIComponent(name);
    const view = tailView({
      title: html`${url} : ${idText(id)} : ${name}`,
      eventsUrl: kind === 'log' ? ctx.urls.msg(url, id, `/log/${file}/events`) : null,
      rawUrl: ctx.urls.msg(url, id, kind === 'log' ? `/log/${file}` : `/attach/${file}`),
      messageUrl: ctx.urls.msg(url, id),
    });
    return ctx.page(req, reply, view, { queue: url, bare: true, scripts: ['tail.js'] });
  }
  return {
    log: (req: FastifyRequest, reply: FastifyReply) => render(req, reply, 'log'),
    attach: (req: FastifyRequest, reply: FastifyReply) => render(req, reply, 'attach'),
  };
}
