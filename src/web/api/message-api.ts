// Message routes of spec §9.3/§9.6: new_message, delete/destroy/commit, clone, run_now, .json and state.json.
import { randomUUID } from 'node:crypto';
import fsp from 'node:fs/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RqError, invalidField, isRqError, shown } from '../../errors.js';
import type { Answer } from '../../ipc/answer.js';
import { mayHaveArrived } from '../../ipc/socket-client.js';
import { refuseFieldNames } from '../../message/create-fields.js';
import { JOB_FIELDS } from '../../message/job-fields.js';
import { parseFullId } from '../../message/message-id.js';
import { dueFromForm } from '../due-time.js';
import { isBrowserForm } from '../form-refusal.js';
import { type Upload, receiveUpload } from '../upload.js';
import { createWithAttachments } from './create-with-attachments.js';
import { withHeaderTrace } from '../trace-headers.js';
import { getMessage } from '../message-files.js';
import { lifecycleApi } from './lifecycle-api.js';
import { type Params, requireShallow, textParam } from '../params.js';
import { asksForJson, bareJsonMessage, pathParam, unreadBodyType } from '../request-params.js';
import { rubyInspect } from '../ruby-inspect.js';
import { html } from '../views/html.js';
import { resultView } from '../views/forms-view.js';
import { describeJsonError } from '../json-position.js';
import { type WebContext, error, notice } from '../web-context.js';
import { infiniteNumber } from '../json-numbers.js';

/**
 * The HTML form's Advanced fields (rq-beyond §B1.11): left empty they mean "not set" (the queue's
 * default), so they are not sent; the queue refuses an empty `limit` a JSON client sends.
 */
const DEFAULTED_WHEN_EMPTY = [...JOB_FIELDS, 'depends', 'depends_fail', 'limit', 'limit_concurrency'];

const CREATE_COMMANDS: Record<string, 'create_message' | 'prep_message' | 'single_que'> = {
  commit: 'create_message',
  prep: 'prep_message',
  single_que: 'single_que',
};

export const INVALID_METHOD = '400 - Invalid method param';

/** Files one new-message form may carry; more are drained unread. */
const MAX_FORM_FILES = 20;

/** The `mesg` parameter: a JSON object text (x_format=json) or `mesg[...]` form fields (html). */
export function messageFields(params: Params, format: string): Record<string, unknown> {
  const mesg = params.mesg;
  if (typeof mesg === 'object' && !Array.isArray(mesg)) return { ...mesg };
  if (format === 'html' && mesg === undefined) return {};
  if (typeof mesg !== 'string') throw RqError.of('RQ_ERR_INVALID_JSON', `mesg: expected a JSON object text such as {"dest":"test"}, received ${shown(mesg)}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(mesg);
  } catch {
    throw RqError.of('RQ_ERR_INVALID_JSON', `mesg: expected a JSON object text such as {"dest":"test"}, received ${shown(mesg)}, ${describeJsonError(mesg)}`);
  }
  // Before anything walks it (shown() included).
  requireShallow(parsed, 'mesg');
  const infinite = infiniteNumber(parsed, 'mesg');
  if (infinite) throw infinite;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw RqError.of('RQ_ERR_INVALID_JSON', `mesg: expected a JSON object, received ${shown(parsed)}`);
  }
  return parsed as Record<string, unknown>;
}

export function messageApi(ctx: WebContext, maxUploadBytes: number) {
  /**
   * The queue got the create but its reply was lost: the message may exist. 202 with the key; the
   * same create sent again with it answers the message's id, and creates it if it was not.
   */
  function accepted(reply: FastifyReply, q: string, key: string, format: string): FastifyReply {
    reply.header('Idempotency-Key', key);
    const text = `queue ${q} took the request but did not answer in time; send it again with idempotency_key ${key} to learn the message id`;
    return format === 'html' ? ctx.text(reply, 202, `202 - ${text}`) : ctx.json(reply, ['accepted', { idempotency_key: key, text }], 202);
  }

  /** Acts on a message; `null` when the queue process does not answer (the classic "no reply"). */
  async function tryAct(
    q: string,
    command: 'delete_message' | 'destroy_message' | 'run_message' | 'clone_message' | 'commit_message',
    id: string,
  ): Promise<Answer<string> | null> {
    try {
      const client = ctx.queue(q);
      return await (command === 'commit_message' ? client.commit(id) : client.act(command, id));
    } catch (err) {
      if (isRqError(err, 'RQ_ERR_NO_REPLY')) {
        ctx.log.warn({ queue: q, command, err: err.message }, 'queue did not answer');
        return null;
      }
      throw err;
    }
  }

  /** A message action's answer to a JSON client: the queue's reply with its status, or 503 when the queue did not answer. */
  const answered = (reply: FastifyReply, q: string, r: Answer<string> | null) =>
    r === null ? ctx.json(reply, ['fail', `queue ${q} did not answer`], 503) : ctx.answerJson(reply, r);

  async function create(req: FastifyRequest, reply: FastifyReply, url: string, q: string, params: Params, files: Upload[]) {
    let bare: Record<string, unknown> | undefined;
    try {
      bare = bareJsonMessage(req);
    } catch (err) {
      // A JSON client's mistake is told in JSON.
      ctx.markJson(req);
      throw err;
    }
    // A bare JSON message always answers JSON, as brightroll's did.
    const format = bare ? 'json' : (textParam(params, 'x_format') ?? 'json');
    if (format !== 'html') ctx.markJson(req);
    else ctx.markHtml(req);
    // A body rq does not read (text/plain) that is all the client sent: its content type is the problem, not a missing mesg.
    const unread = bare || params.mesg !== undefined ? null : unreadBodyType(req);
    if (unread) throw RqError.of('RQ_ERR_UNSUPPORTED_BODY', unread);
    // The queue validates and types the fields (normaliseCreate): form text such as count="3" is read there.
    const fields = bare ?? messageFields(params, format);
    // Too many keys, or a misspelt field (prioirty), are refused; other unknown keys are dropped by the create, as the classic daemon did.
    refuseFieldNames(fields);
    withHeaderTrace(req, fields);
    if (format === 'html') for (const f of DEFAULTED_WHEN_EMPTY) if (fields[f] === '') delete fields[f];
    const due = dueFromForm(textParam(params, 'due_at'), textParam(params, 'due_tz'));
    if (due !== undefined) fields.due = due;
    const method = fields._method ?? 'commit';
    delete fields._method;
    const command = typeof method === 'string' && Object.hasOwn(CREATE_COMMANDS, method) ? CREATE_COMMANDS[method] : undefined;
    const xFormat = textParam(params, 'x_format');
    // x_format=json is new_message's classic default (spec §9.6): a classic client that sends it
    // (the classic relay does) still gets the classic texts; a JSON body or an Accept header asks for JSON.
    const asked = bare !== undefined || (xFormat === undefined && asksForJson(req));
    if (!command) return ctx.classicText(req, reply, 400, INVALID_METHOD, asked);
    if (files.length > 0 && method !== 'commit' && method !== 'prep')
      throw invalidField(
        'filedata',
        "attachments with the mode 'commit' or 'prep' (a single_que may answer a message already queued, which takes no files)",
        method,
      );
    // Every create carries a key (the client's, or one made here), so a reply lost on the way
    // can be asked for again without making the message twice.
    const header = req.headers['idempotency-key'];
    const given = fields.idempotency_key;
    if (given === undefined || given === null || given === '')
      fields.idempotency_key = typeof header === 'string' && header !== '' ? header : `web-${randomUUID()}`;
    let a: Answer<string>;
    try {
      a = files.length > 0 ? await createWithAttachments(ctx, q, fields, method as 'commit' | 'prep', files) : await ctx.queue(q).create(fields, command);
    } catch (err) {
      if (!isRqError(err, 'RQ_ERR_NO_REPLY')) throw err;
      if (!mayHaveArrived(err)) {
        // Never sent: nothing was created, a plain retry is safe.
        const text = `queue ${q} did not answer: ${err.message}`;
        return format === 'html' ? ctx.text(reply, 503, `503 - ${text}`) : ctx.json(reply, ['fail', text], 503);
      }
      return accepted(reply, q, String(fields.idempotency_key), format);
    }
    if (!a.ok && a.code === 'RQ_ERR_QUEUE_DOWN') return ctx.classicText(req, reply, 503, '503 - Service Unavailable - Operationally Down', asked);
    if (format !== 'html') return ctx.answerJson(reply, a);
    const flash = a.ok
      ? notice(html`Created message ${a.value}`)
      : error(html`Error creating message: ${a.code === 'RQ_ERR_PROTOCOL' ? rubyInspect(a.raw) : a.text}`);
    const back = textParam(params, 'back');
    if (back !== undefined && back !== '') return ctx.redirect(reply, ctx.urls.back(req, back, ctx.urls.queue(url)), flash);
    // Post/Redirect/Get: a person who reloads the page must not send the message again. The new
    // message's page, or the form again with the refusal (classic clients get the result page).
    if (isBrowserForm(req)) {
      const made = a.ok ? parseFullId(a.value) : null;
      return ctx.redirectTo(req, reply, made ? ctx.urls.msg(made.queue, made.id) : ctx.urls.queue(url, '/new_message'), flash);
    }
    return ctx.page(req, reply, resultView(url, a, ctx.urls), { queue: url, status: a.ok ? 200 : ctx.refusalStatus(a) });
  }

  return {
    /** POST /q/<q>/new_message (R); the form's multipart variant carries attachments (`filedata`) */
    async newMessage(req: FastifyRequest, reply: FastifyReply) {
      const url = pathParam(req, 'q');
      const q = await ctx.requireRoutedQueue(url);
      const jsonField = (name: string, value: string) => name === 'x_format' && value === 'json' && ctx.markJson(req);
      const upload = req.isMultipart() ? await receiveUpload(req, ctx.deps.uploadDir, 'filedata', maxUploadBytes, jsonField, MAX_FORM_FILES) : null;

      try {
        return await create(req, reply, url, q, upload ? { ...(req.query as Params), ...upload.params } : await ctx.params(req), upload?.files ?? []);
      } finally {
        // The queue hard-linked them (or refused): the temp names are no longer needed either way.
        await Promise.all((upload?.files ?? []).map((f) => fsp.rm(f.tmpPath, { force: true })));
      }
    },

    /** POST /q/<q>/<id> (R) with _method delete | destroy | commit, or cancel (rq-beyond §B1.11) */
    async messageAction(req: FastifyRequest, reply: FastifyReply) {
      const url = pathParam(req, 'q');
      const q = await ctx.requireRoutedQueue(url);
      const id = ctx.requireMsgId(pathParam(req, 'id'));
      const params = await ctx.params(req);
      const format = textParam(params, 'x_format') ?? 'html';
      if (format === 'json') ctx.markJson(req);
      else if (textParam(params, 'x_format') === 'html') ctx.markHtml(req);
      const method = textParam(params, '_method');
      if (method === 'cancel') return lifecycleApi(ctx).cancel(req, reply, params);
      if (method !== 'delete' && method !== 'destroy' && method !== 'commit') return ctx.text(reply, 400, INVALID_METHOD);
      const r = method === 'commit' ? await tryAct(q, 'commit_message', id) : await tryAct(q, method === 'delete' ? 'delete_message' : 'destroy_message', id);
      if (format === 'json') return answered(reply, q, r);
      const self = ctx.urls.msg(url, id);
      if (method === 'commit') {
        return ctx.redirectTo(req, reply, self, r?.ok ? notice(html`Message committed successfully`) : error(html`Commit got ${rubyInspect(r?.raw ?? null)}`));
      }
      if (r?.ok)
        return ctx.redirectTo(
          req,
          reply,
          ctx.urls.queue(url),
          notice(html`${method === 'delete' ? 'Message deleted successfully' : 'Message destroyed successfully'}`),
        );
      return ctx.redirectTo(req, reply, self, error(html`${method === 'delete' ? 'Delete' : 'destroy'} got ${rubyInspect(r?.raw ?? null)}`));
    },

    /** POST /q/<q>/<id>/clone (R) */
    async clone(req: FastifyRequest, reply: FastifyReply) {
      const url = pathParam(req, 'q');
      const q = await ctx.requireRoutedQueue(url);
      const id = ctx.requireMsgId(pathParam(req, 'id'));
      // x_format=json in the body asks for JSON too: a JSON client learns the clone's id from the queue's reply.
      await ctx.actionParams(req);
      const r = await tryAct(q, 'clone_message', id);
      if (ctx.wantsJson(req)) return answered(reply, q, r);
      if (r === null) return ctx.text(reply, 500, "500 - Couldn't clone message. Internal error.");
      if (!r.ok) return ctx.couldNot(reply, r, 'clone message');
      return ctx.redirectTo(req, reply, ctx.urls.queue(url), notice(html`Message cloned successfully`));
    },

    /** POST /q/<q>/<id>/run_now (R) */
    async runNow(req: FastifyRequest, reply: FastifyReply) {
      const url = pathParam(req, 'q');
      const q = await ctx.requireRoutedQueue(url);
      const id = ctx.requireMsgId(pathParam(req, 'id'));
      await ctx.actionParams(req);
      const r = await tryAct(q, 'run_message', id);
      if (ctx.wantsJson(req)) return answered(reply, q, r);
      if (r === null) return ctx.text(reply, 500, "500 - Couldn't run message. Internal error.");
      if (!r.ok) return ctx.couldNot(reply, r, 'run message');
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
      const r = await ctx.queue(q).state(id);
      if (!r.ok) throw RqError.of('RQ_ERR_MSG_NOT_FOUND', `${q}/${id} (${r.code === 'RQ_ERR_PROTOCOL' ? shown(r.raw) : r.text})`);
      return ctx.json(reply, [r.value]);
    },
  };
}
