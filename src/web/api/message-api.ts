// Message routes of spec §9.3/§9.6: new_message, delete/destroy/commit, clone, run_now, .json and state.json.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RqError, shown } from '../../errors.js';
import { getMessage } from '../message-files.js';
import { type Params, textParam } from '../params.js';
import { pathParam, readParams } from '../request-params.js';
import { rubyInspect } from '../ruby-inspect.js';
import { html } from '../views/html.js';
import { resultView } from '../views/forms-view.js';
import { type WebContext, error, notice } from '../web-context.js';

const CREATE_COMMANDS: Record<string, string> = { commit: 'create_message', prep: 'prep_message', single_que: 'single_que' };

export const INVALID_METHOD = '400 - Invalid method param';

/** The `mesg` parameter: a JSON object text (x_format=json) or `mesg[...]` form fields (html). */
export function messageFields(params: Params, format: string): Record<string, unknown> {
  const mesg = params.mesg;
  if (typeof mesg === 'object' && !Array.isArray(mesg)) return { ...mesg };
  if (format === 'html' && mesg === undefined) return {};
  if (typeof mesg !== 'string') throw new RqError('RQ_ERR_INVALID_JSON', `mesg: expected a JSON object text such as {"dest":"test"}, received ${shown(mesg)}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(mesg);
  } catch (err) {
    throw new RqError('RQ_ERR_INVALID_JSON', `mesg: expected a JSON object text such as {"dest":"test"}, received ${shown(mesg)} (${(err as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new RqError('RQ_ERR_INVALID_JSON', `mesg: expected a JSON object, received ${shown(parsed)}`);
  }
  return parsed as Record<string, unknown>;
}

/** The classic web normalisation: webhook text split on spaces, counts made integers. */
export function normaliseWebFields(m: Record<string, unknown>): Record<string, unknown> {
  const out = { ...m };
  if (typeof out.post_run_webhook === 'string') out.post_run_webhook = out.post_run_webhook.split(' ').filter(Boolean);
  for (const k of ['count', 'max_count']) {
    const v = out[k];
    // Numeric text becomes a number; anything else goes on to the queue, whose error names the field.
    if (typeof v === 'string' && /^\s*\d+\s*$/.test(v)) out[k] = Number(v);
  }
  return out;
}

const isOk = (r: unknown): r is ['ok', unknown] => Array.isArray(r) && r[0] === 'ok';

export function messageApi(ctx: WebContext) {
  /** Asks the queue; `null` when its process does not answer (the classic "no reply"). */
  async function tryAsk(q: string, command: string, arg: unknown): Promise<unknown | null> {
    try {
      return await ctx.ask(q, command, arg);
    } catch (err) {
      if (err instanceof RqError && err.code === 'RQ_ERR_NO_REPLY') {
        ctx.log.warn({ queue: q, command, err: err.message }, 'queue did not answer');
        return null;
      }
      throw err;
    }
  }

  return {
    /** POST /q/<q>/new_message (R) */
    async newMessage(req: FastifyRequest, reply: FastifyReply) {
      const url = pathParam(req, 'q');
      const q = await ctx.requireRoutedQueue(url);
      const params = await readParams(req);
      const format = textParam(params, 'x_format') ?? 'json';
      if (format !== 'html') ctx.markJson(req);
      const fields = normaliseWebFields(messageFields(params, format));
      const method = fields._method ?? 'commit';
      delete fields._method;
      const command = typeof method === 'string' && Object.hasOwn(CREATE_COMMANDS, method) ? CREATE_COMMANDS[method] : undefined;
      if (!command) return ctx.text(reply, 400, INVALID_METHOD);
      let r: unknown;
      try {
        r = await ctx.ask(q, command, fields);
      } catch (err) {
        if (!(err instanceof RqError) || err.code !== 'RQ_ERR_NO_REPLY') throw err;
        // The classic answered `null` here; a 503 with the reason tells a client to retry.
        const text = `queue ${q} did not answer: ${err.message}`;
        return format === 'html' ? ctx.text(reply, 503, `503 - ${text}`) : ctx.json(reply, ['fail', text], 503);
      }
      if (Array.isArray(r) && r[0] === 'fail' && r[1] === 'status: DOWN') return ctx.text(reply, 503, '503 - Service Unavailable - Operationally Down');
      if (format !== 'html') return ctx.json(reply, r);
      const back = textParam(params, 'back');
      if (back !== undefined && back !== '') {
        const flash = isOk(r) ? notice(html`Created message ${String(r[1])}`) : error(html`Error creating message: ${Array.isArray(r) ? String(r[1]) : rubyInspect(r)}`);
        return ctx.redirect(reply, ctx.urls.back(req, back, ctx.urls.queue(url)), flash);
      }
      return ctx.page(req, reply, resultView(url, r, ctx.urls), { queue: url });
    },

    /** POST /q/<q>/<id> (R) with _method delete | destroy | commit */
    async messageAction(req: FastifyRequest, reply: FastifyReply) {
      const url = pathParam(req, 'q');
      const q = await ctx.requireRoutedQueue(url);
      const id = ctx.requireMsgId(pathParam(req, 'id'));
      const params = await readParams(req);
      const format = textParam(params, 'x_format') ?? 'html';
      if (format === 'json') ctx.markJson(req);
      const method = textParam(params, '_method');
      const command = method === 'delete' ? 'delete_message' : method === 'destroy' ? 'destroy_message' : method === 'commit' ? 'commit_message' : undefined;
      if (!command) return ctx.text(reply, 400, INVALID_METHOD);
      const r = await tryAsk(q, command, { msg_id: id });
      if (format === 'json') return r === null ? ctx.json(reply, ['fail', `queue ${q} did not answer`], 503) : ctx.json(reply, r);
      const self = ctx.urls.msg(url, id);
      if (method === 'commit') {
        return ctx.redirectTo(req, reply, self, isOk(r) ? notice(html`Message committed successfully`) : error(html`Commit got ${rubyInspect(r)}`));
      }
      if (isOk(r)) return ctx.redirectTo(req, reply, ctx.urls.queue(url), notice(html`${method === 'delete' ? 'Message deleted successfully' : 'Message destroyed successfully'}`));
      return ctx.redirectTo(req, reply, self, error(html`${method === 'delete' ? 'Delete' : 'destroy'} got ${rubyInspect(r)}`));
    },

    /** POST /q/<q>/<id>/clone (R) */
    async clone(req: FastifyRequest, reply: FastifyReply) {
      const url = pathParam(req, 'q');
      const q = await ctx.requireRoutedQueue(url);
      const id = ctx.requireMsgId(pathParam(req, 'id'));
      const r = await tryAsk(q, 'clone_message', { msg_id: id });
      if (r === null) return ctx.text(reply, 500, "500 - Couldn't clone message. Internal error.");
      if (!isOk(r)) return ctx.text(reply, 500, `500 - Couldn't clone message. ${rubyInspect(r)}.`);
      return ctx.redirectTo(req, reply, ctx.urls.queue(url), notice(html`Message cloned successfully`));
    },

    /** POST /q/<q>/<id>/run_now (R) */
    async runNow(req: FastifyRequest, reply: FastifyReply) {
      const url = pathParam(req, 'q');
      const q = await ctx.requireRoutedQueue(url);
      const id = ctx.requireMsgId(pathParam(req, 'id'));
      const r = await tryAsk(q, 'run_message', { msg_id: id });
      if (r === null) return ctx.text(reply, 500, "500 - Couldn't run message. Internal error.");
      if (!isOk(r)) return ctx.text(reply, 500, `500 - Couldn't run message. ${rubyInspect(r)}.`);
      return ctx.redirectTo(req, reply, ctx.urls.msg(url, id), notice(html`Message in run successfully`));
    },

    /** GET /q/<q>/<id>.json (R) */
    async messageJson(req: FastifyRequest, reply: FastifyReply, id: string) {
      ctx.markJson(req);
      const q = await ctx.requireRoutedQueue(pathParam(req, 'q'));
      return ctx.json(reply, await getMessage(ctx, q, ctx.requireMsgId(id)));
    },

    /** GET /q/<q>/<id>/state.json (R) */
    async stateJson(req: FastifyRequest, reply: FastifyReply) {
      ctx.markJson(req);
      const q = await ctx.requireRoutedQueue(pathParam(req, 'q'));
      const id = ctx.requireMsgId(pathParam(req, 'id'));
      const r = await ctx.ask(q, 'get_message_state', { msg_id: id });
      if (!isOk(r)) throw new RqError('RQ_ERR_MSG_NOT_FOUND', `Message not found: ${q}/${id} (${Array.isArray(r) ? String(r[1]) : shown(r)})`);
      return ctx.json(reply, [r[1]]);
    },
  };
}
