// Dependency and limit routes (rq-beyond §B8, §B12, §B1.11): POST /q/<q>/<id>/undepend and GET /limits.json.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RqError, invalidField } from '../../errors.js';
import { readDepends } from '../../message/depends.js';
import { flagValue } from '../../message/flag.js';
import { limitKeyParam, limitStatus } from '../limit-status.js';
import { webActor } from './lifecycle-api.js';
import { type Params, textParam } from '../params.js';
import { pathParam } from '../request-params.js';
import { html } from '../views/html.js';
import { type WebContext, notice } from '../web-context.js';

/** The queue's own text, so a refusal reads the same whether the web or the queue found it. */
const NOT_BOTH = 'give depends or all, not both and not neither';

/**
 * `depends` (comma-separated, `depends[]=`, or a JSON array) or `all` (true/false, `on`, 1…), checked
 * here with the queue's texts before anything is sent: a bad request never reaches the socket.
 */
export function undependParams(p: Params): { depends: string[] } | { all: true } {
  const rawAll: unknown = p.all;
  const all = flagValue(rawAll);
  if (all === undefined) throw invalidField('all', 'true or false', rawAll);
  const rawDepends: unknown = p.depends;
  const given = rawDepends !== undefined && rawDepends !== null && rawDepends !== '';
  if (all === given) throw RqError.of('RQ_ERR_USAGE', NOT_BOTH);
  if (all) return { all: true };
  // Full ids are kept as given: the queue knows which host URL is its own.
  return { depends: readDepends(rawDepends) };
}

export function dependsLimitsApi(ctx: WebContext) {
  return {
    /**
     * POST /q/<q>/<id>/undepend (R): the message stops waiting for `depends` or for `all` of its
     * dependencies. JSON: the queue's reply (`["ok", [refs still awaited]]`) with its status; HTML: a
     * flash and 303 to `back` or the message page; a refusal is the classic `Couldn't` text.
     */
    async undepend(req: FastifyRequest, reply: FastifyReply) {
      const { p, json } = await ctx.actionParams(req);
      const url = pathParam(req, 'q');
      const q = await ctx.requireRoutedQueue(url);
      const id = ctx.requireMsgId(pathParam(req, 'id'));
      const r = await ctx.queue(q).undepend(id, { ...undependParams(p), actor: webActor(req, Boolean(ctx.deps.config.basic_auth)) });
      if (json) return ctx.answerJson(reply, r);
      if (!r.ok) return ctx.couldNot(reply, r, 'undepend message');
      const flash = notice(r.value.length ? html`Still waiting on ${r.value.join(', ')}` : html`No longer waiting on dependencies`);
      return ctx.redirect(reply, ctx.urls.back(req, textParam(p, 'back'), ctx.urls.msg(url, id)), flash);
    },

    /** GET /limits.json?key=: rq-mgr's limit_status, `{"<key>": {concurrency, source, holders, waiting}}`; 503 when rq-mgr does not answer. */
    async limitsJson(req: FastifyRequest, reply: FastifyReply) {
      ctx.markJson(req);
      const key = limitKeyParam(req.query as Record<string, unknown>);
      reply.header('Cache-Control', 'no-store');
      return ctx.answerValue(reply, await limitStatus(ctx, key));
    },
  };
}
