// Operator actions on queues: adminoper, restart, ack_errs, new_queue (+ _link) and delete_queue.
import type { MgrClient } from '../../ipc/mgr-client.js';
import fs from 'node:fs/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RqError, invalidField, isRqError, shown } from '../../errors.js';
import { DEFAULT_EXEC_PREFIX } from '../../config/queue-config.js';
import { type Answer, refusalError } from '../../ipc/answer.js';
import type { Creation } from '../../ipc/mgr-client.js';
import { type Params, objectParam, textParam } from '../params.js';
import { pathParam } from '../request-params.js';
import { rubyInspect } from '../ruby-inspect.js';
import { untilQueueAnswers } from '../../ipc/until-answers.js';
import { requireInScriptDirs } from '../script-dirs.js';
import { html } from '../views/html.js';
import { type WebContext, error, notice } from '../web-context.js';

/** Checked in this order (spec §5.3). */
const ADMIN_ACTIONS = ['pause', 'resume', 'down', 'up'] as const;

/** What an action did, in words (the classic flash said "Successfully downd queue"). */
const DONE_WORDS: Record<(typeof ADMIN_ACTIONS)[number], string> = { pause: 'paused', resume: 'resumed', down: 'stopped', up: 'started' };

/** How long a creation waits for the new queue to answer before redirecting anyway. */
const NEW_QUEUE_ANSWER_MS = 10_000;

/** Restart waits for the old queue process to stop (its scripts get a grace period). */
const RESTART_TIMEOUT_MS = 60_000;

export const NEW_QUEUE_FORBIDDEN = 'Queue creation not allowed at this time.';

function present(params: Params, key: string): boolean {
  const v = params[key];
  return v !== undefined && v !== '';
}

export function adminApi(ctx: WebContext) {
  const allowNewQueue = () => ctx.deps.config.allow_new_queue === true;

  /**
   * A prefix is code too ("bash -c 'anything'"), and so are environment variables (BASH_ENV runs a
   * file under the default `bash -lc`; LD_PRELOAD, PATH): over HTTP only when the config allows
   * exec_prefix. The default prefix, as the New Queue form fills it in, is no choice of the caller.
   */
  function requireNoCodeSettings(config: Record<string, unknown> | null | undefined, field: (key: string) => string): void {
    if (ctx.deps.config.allow_exec_prefix === true || !config) return;
    const prefix = config.exec_prefix;
    if (prefix !== undefined && prefix !== null && prefix !== '' && !(typeof prefix === 'string' && prefix.trim() === DEFAULT_EXEC_PREFIX.trim())) {
      throw RqError.of('RQ_ERR_FORBIDDEN', field('exec_prefix'), 'no exec_prefix over HTTP unless config/config.json sets allow_exec_prefix', shown(prefix));
    }
    const vars = config.env_vars;
    if (vars !== undefined && vars !== null && vars !== '' && !(typeof vars === 'object' && Object.keys(vars).length === 0)) {
      throw RqError.of(
        'RQ_ERR_FORBIDDEN',
        field('env_vars'),
        'no env_vars over HTTP unless config/config.json sets allow_exec_prefix (BASH_ENV, LD_PRELOAD and PATH run code)',
        shown(vars),
      );
    }
  }

  /** A supervisor call; `null` when rq-mgr does not answer. */
  /** A daemon that did not answer: 503 `["fail", "<who> did not answer"]` to a JSON client (it may try again), the classic 500 text to others. */
  function unanswered(req: FastifyRequest, reply: FastifyReply, who: string, classic: string): FastifyReply {
    if (ctx.wantsJson(req)) return ctx.json(reply, ['fail', `${who} did not answer`], 503);
    return ctx.text(reply, 500, classic);
  }

  async function tryMgr<T>(what: string, call: (mgr: MgrClient) => Promise<T>): Promise<T | null> {
    try {
      return await call(ctx.deps.mgr);
    } catch (err) {
      ctx.log.warn({ command: what, err: (err as Error).message }, 'rq-mgr did not answer');
      return null;
    }
  }

  /**
   * After rq-mgr created a queue: the 303 waits until its process answers, so the client's next
   * request (its config, a first message) is served rather than refused with a 503.
   */
  async function answering(name: string): Promise<void> {
    if (await untilQueueAnswers(() => ctx.queue(name).ping(), NEW_QUEUE_ANSWER_MS)) return;
    ctx.log.warn({ queue: name, waited_ms: NEW_QUEUE_ANSWER_MS }, 'new queue did not answer in time; redirecting anyway');
  }

  /** The classic flash of queue creation/deletion: the form params and the supervisor's reply. */
  const weGot = (params: Params, r: unknown) => html`We got <code>${rubyInspect(params)}</code> from form, and <code>${rubyInspect(r)}</code> from QueueMgr`;

  /**
   * rq-mgr's answer to a queue form: a 303 to `to` with it in a flash, as the classic web; to a JSON
   * client `["ok", reply]`, or its refusal as an error in its format and status (404 no such queue, 503 no answer).
   */
  const answerForm = (req: FastifyRequest, reply: FastifyReply, params: Params, to: string, got: Answer<unknown> | Creation | null) => {
    if (ctx.wantsJson(req)) {
      if (got === null) throw RqError.of('RQ_ERR_NO_REPLY', 'rq-mgr did not answer');
      if (!got.ok) throw refusalError(got);
      // A creation's reply is the classic ["success", text]: its text, as a deletion's.
      const said = 'value' in got ? got.value : Array.isArray(got.raw) ? got.raw[1] : got.raw;
      return ctx.json(reply, ['ok', said]);
    }
    const r = got?.raw ?? null;
    return ctx.redirectTo(req, reply, to, got?.ok === true ? notice(weGot(params, r)) : error(weGot(params, r)));
  };

  return {
    /** POST /q/<q>/adminoper with one of pause | resume | down | up, and back */
    async adminoper(req: FastifyRequest, reply: FastifyReply) {
      const q = await ctx.requireQueue(pathParam(req, 'q'));
      const { p: params } = await ctx.actionParams(req);
      const given = ADMIN_ACTIONS.filter((a) => present(params, a));
      // All four at once is the classic "no action"; none leaves given[0] undefined, refused the same way.
      const action = given.length < ADMIN_ACTIONS.length ? given[0] : undefined;
      if (!action) {
        const received = given.length === 0 ? 'none of them' : 'all four, which is no action';
        return ctx.text(reply, 400, `400 - Invalid adminoper param: expected one of ${ADMIN_ACTIONS.join(', ')}, received ${received}`);
      }
      const r = await tryMgr(`${action}_queue`, (m) => m.admin(action, q));
      if (r === null) return unanswered(req, reply, 'rq-mgr', `500 - Couldn't ${action} queue. Internal error.`);
      if (!r.ok) return ctx.couldNot(reply, r, `${action} queue`);
      if (ctx.wantsJson(req)) return ctx.json(reply, ['ok', `queue ${q} ${DONE_WORDS[action]}`]);
      return ctx.redirect(reply, ctx.urls.back(req, textParam(params, 'back'), ctx.urls.queue(q)), notice(html`Queue ${q} ${DONE_WORDS[action]}`));
    },

    /** POST /q/<q>/restart */
    async restart(req: FastifyRequest, reply: FastifyReply) {
      const q = await ctx.requireQueue(pathParam(req, 'q'));
      const { p: params } = await ctx.actionParams(req);
      const r = await tryMgr('restart_queue', (m) => m.restart(q, RESTART_TIMEOUT_MS));
      if (r === null) return unanswered(req, reply, 'rq-mgr', "500 - Couldn't restart queue. Internal error.");
      if (!r.ok) return ctx.couldNot(reply, r, 'restart queue');
      if (ctx.wantsJson(req)) return ctx.json(reply, ['ok', `queue ${q} restarted`]);
      return ctx.redirect(reply, ctx.urls.back(req, textParam(params, 'back'), ctx.urls.queue(q)), notice(html`Queue ${q} restarted`));
    },

    /** POST /q/<q>/ack_errs (R) */
    async ackErrs(req: FastifyRequest, reply: FastifyReply) {
      const url = pathParam(req, 'q');
      const q = await ctx.requireRoutedQueue(url);
      const { p: params } = await ctx.actionParams(req);
      let r: Answer<number>;
      try {
        r = await ctx.queue(q).ackErrs();
      } catch (err) {
        if (isRqError(err, 'RQ_ERR_NO_REPLY')) return unanswered(req, reply, `queue ${q}`, "500 - Couldn't ack errs queue. Internal error.");
        throw err;
      }
      if (!r.ok) return ctx.couldNot(reply, r, 'ack errs queue');
      if (ctx.wantsJson(req)) return ctx.answerJson(reply, r);
      return ctx.redirect(reply, ctx.urls.back(req, textParam(params, 'back'), ctx.urls.queue(url)), notice(html`Successfully acknowledged errors`));
    },

    /** POST /new_queue with queue[name], queue[script], … */
    async newQueue(req: FastifyRequest, reply: FastifyReply) {
      if (!allowNewQueue()) return ctx.text(reply, 403, NEW_QUEUE_FORBIDDEN);
      const { p: params } = await ctx.actionParams(req);
      const queue = objectParam(params, 'queue') ?? {};
      ctx.requireNameFits(queue.name, 'queue[name]');
      await requireInScriptDirs(ctx.deps.root, ctx.deps.config, 'queue[script]', queue.script);
      requireNoCodeSettings(queue, (k) => `queue[${k}]`);
      // The script as given (./test/test_script.sh stays relative to the root); the queue checks
      // where it resolves again at every start, so a link swapped later cannot move it out of script_dirs.
      const made = await tryMgr('create_queue', (m) => m.createQueue(JSON.stringify({ ...queue, script_dirs_only: true }), RESTART_TIMEOUT_MS));
      const name = typeof queue.name === 'string' ? queue.name : '';
      if (made?.ok === true && name) await answering(name);
      return answerForm(req, reply, params, name ? ctx.urls.queue(name) : ctx.urls.link(), made);
    },

    /** POST /new_queue_link with queue[json_path] (brightroll): a queue whose config.json links to that file. */
    async newQueueLink(req: FastifyRequest, reply: FastifyReply) {
      if (!allowNewQueue()) return ctx.text(reply, 403, NEW_QUEUE_FORBIDDEN);
      const { p: params } = await ctx.actionParams(req);
      const jsonPath = textParam(objectParam(params, 'queue'), 'json_path') ?? '';
      const file = await requireInScriptDirs(ctx.deps.root, ctx.deps.config, 'queue[json_path]', jsonPath);
      let linked: Record<string, unknown> | null;
      try {
        linked = JSON.parse(await fs.readFile(file, 'utf8')) as Record<string, unknown> | null;
      } catch {
        throw RqError.of('RQ_ERR_BAD_JSON_FILE', jsonPath);
      }
      const name = linked?.name;
      ctx.requireNameFits(name, `name of ${jsonPath}`);
      await requireInScriptDirs(ctx.deps.root, ctx.deps.config, `script of ${jsonPath}`, linked?.script);
      requireNoCodeSettings(linked, (k) => `${k} of ${jsonPath}`);
      const link = await tryMgr('create_queue_link', (m) => m.createQueueLink(JSON.stringify({ json_path: file, script_dirs_only: true }), RESTART_TIMEOUT_MS));
      const named = typeof name === 'string' && name !== '';
      if (link?.ok === true && named) await answering(name);
      return answerForm(req, reply, params, named ? ctx.urls.queue(name) : ctx.urls.link(), link);
    },

    /** POST /delete_queue with queue_name (no allow_new_queue check, as classic) */
    async deleteQueue(req: FastifyRequest, reply: FastifyReply) {
      const { p: params } = await ctx.actionParams(req);
      const name = textParam(params, 'queue_name');
      if (name === undefined || name === '') throw invalidField('queue_name', 'a queue name', name);
      const del = await tryMgr('delete_queue', (m) => m.deleteQueue(name));
      return answerForm(req, reply, params, ctx.urls.link(), del);
    },
  };
}
