// Lifecycle routes (rq-beyond §B1.11): cancel, requeue, reschedule and re-prioritise messages, read a history and what runs and waits.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RqError } from '../../errors.js';
import type { Answer } from '../../ipc/answer.js';
import { flagValue } from '../../message/flag.js';
import { type Params, textParam } from '../params.js';
import { pathParam } from '../request-params.js';
import { html } from '../views/html.js';
import { type WebContext, notice } from '../web-context.js';

/**
 * `web:<basic-auth user>` or `web:<client ip>`: who asked, for the history and `cancel.by`. The
 * user is only believed when basic auth is on (the onRequest hook checked the password).
 */
export function webActor(req: FastifyRequest, authOn: boolean): string {
  const auth = req.headers.authorization;
  const m = authOn && typeof auth === 'string' ? /^Basic\s+(\S+)$/i.exec(auth) : null;
  const user = m ? Buffer.from(m[1], 'base64').toString('utf8').split(':')[0] : '';
  return `web:${(user || req.ip).slice(0, 60)}`;
}

export function lifecycleApi(ctx: WebContext) {
  const actor = (req: FastifyRequest) => webActor(req, Boolean(ctx.deps.config.basic_auth));
  /** JSON (x_format=json, or a JSON body or Accept without one): the queue's reply with its status code. HTML: a flash and 303 to `back` or the message page. */
  async function act(
    req: FastifyRequest,
    reply: FastifyReply,
    params: Params,
    done: string,
    what: string,
    call: (q: string, id: string) => Promise<Answer<string>>,
  ) {
    const url = pathParam(req, 'q');
    const q = await ctx.requireRoutedQueue(url);
    const id = ctx.requireMsgId(pathParam(req, 'id'));
    const json = ctx.actionFormat(req, params);
    const r = await call(q, id);
    if (json) return ctx.answerJson(reply, r);
    if (!r.ok) return ctx.couldNot(reply, r, what);
    const flash = notice(html`${r.value === 'msg cancelling' ? 'Message is being cancelled' : done}`);
    // A purged message has no page left to go back to: its queue's page instead.
    const target = flagValue(textParam(params, 'purge')) && r.value === 'msg cancelled' ? ctx.urls.queue(url) : ctx.urls.msg(url, id);
    const back = textParam(params, 'back');
    if (back) return ctx.redirect(reply, ctx.urls.back(req, back, target), flash);
    return ctx.redirectTo(req, reply, target, flash);
  }

  const api = {
    /** POST /q/<q>/<id>/cancel, and POST /q/<q>/<id> with _method=cancel */
    async cancel(req: FastifyRequest, reply: FastifyReply, params?: Params) {
      const p = params ?? (await ctx.params(req));
      return act(req, reply, p, 'Message cancelled successfully', 'cancel message', (q, id) =>
        ctx.queue(q).cancel(id, { reason: textParam(p, 'reason'), purge: textParam(p, 'purge'), actor: actor(req) }),
      );
    },

    /** POST /q/<q>/<id>/requeue */
    async requeue(req: FastifyRequest, reply: FastifyReply) {
      const p = await ctx.params(req);
      return act(req, reply, p, 'Message requeued successfully', 'requeue message', (q, id) =>
        ctx.queue(q).requeue(id, { reset: textParam(p, 'reset'), due: textParam(p, 'due'), delay: textParam(p, 'delay'), actor: actor(req) }),
      );
    },

    /** POST /q/<q>/<id>/reschedule */
    async reschedule(req: FastifyRequest, reply: FastifyReply) {
      const p = await ctx.params(req);
      return act(req, reply, p, 'Message rescheduled successfully', 'reschedule message', async (q, id) => {
        const r = await ctx.queue(q).reschedule(id, { due: textParam(p, 'due'), delay: textParam(p, 'delay'), actor: actor(req) });
        return r.ok ? { ...r, value: String(r.value) } : r;
      });
    },

    /** POST /q/<q>/<id>/priority */
    async priority(req: FastifyRequest, reply: FastifyReply) {
      const p = await ctx.params(req);
      return act(req, reply, p, 'Priority set successfully', 'set priority', async (q, id) => {
        const r = await ctx.queue(q).setPriority(id, textParam(p, 'priority'), actor(req));
        return r.ok ? { ...r, value: String(r.value) } : r;
      });
    },

    /** POST /q/<q>/requeue_errs: JSON the queue's reply; HTML a flash with the count and 303 to `back` or the queue page. */
    async requeueErrs(req: FastifyRequest, reply: FastifyReply) {
      const url = pathParam(req, 'q');
      const q = await ctx.requireRoutedQueue(url);
      const { p, json } = await ctx.actionParams(req);
      const r = await ctx
        .queue(q)
        .requeueErrs({ outcome: textParam(p, 'outcome'), group: textParam(p, 'group'), limit: textParam(p, 'limit'), actor: actor(req) });
      if (json) return ctx.answerJson(reply, r);
      if (!r.ok) return ctx.couldNot(reply, r, 'requeue errs');
      return ctx.redirect(reply, ctx.urls.back(req, textParam(p, 'back'), ctx.urls.queue(url)), notice(html`${r.value} messages requeued`));
    },

    /** GET /q/<q>/running.json */
    async runningJson(req: FastifyRequest, reply: FastifyReply) {
      ctx.markJson(req);
      const q = await ctx.requireRoutedQueue(pathParam(req, 'q'));
      return ctx.answerValue(reply, await ctx.queue(q).running());
    },

    /** GET /q/<q>/waiting.json?reason=&limit= */
    async waitingJson(req: FastifyRequest, reply: FastifyReply) {
      ctx.markJson(req);
      const q = await ctx.requireRoutedQueue(pathParam(req, 'q'));
      const query = req.query as Record<string, unknown>;
      return ctx.answerValue(reply, await ctx.queue(q).waiting({ reason: query.reason, limit: query.limit }));
    },

    /** GET /q/<q>/<id>/history.json */
    async historyJson(req: FastifyRequest, reply: FastifyReply) {
      ctx.markJson(req);
      const q = await ctx.requireRoutedQueue(pathParam(req, 'q'));
      const id = ctx.requireMsgId(pathParam(req, 'id'));
      const r = await ctx.queue(q).history(id);
      if (!r.ok) throw RqError.of('RQ_ERR_MSG_NOT_FOUND', `${q}/${id} (${r.text})`);
      return ctx.json(reply, r.value);
    },
  };
  return api;
}
