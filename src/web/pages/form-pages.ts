// GET /q/<q>/new_message and GET /new_queue: the two forms.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RqError } from '../../errors.js';
import { queuePaths } from '../../config/paths.js';
import { type FormConfig, loadFormConfig } from '../../config/form-config.js';
import { NEW_QUEUE_FORBIDDEN } from '../api/admin-api.js';
import { pathParam } from '../request-params.js';
import { newMessageView, newQueueView } from '../views/forms-view.js';
import type { WebContext } from '../web-context.js';

export function formPages(ctx: WebContext) {
  return {
    /** form.json is read on every request, so edits show at once. */
    async newMessage(req: FastifyRequest, reply: FastifyReply) {
      const q = await ctx.requireQueue(pathParam(req, 'q'));
      let form: FormConfig | null;
      try {
        form = await loadFormConfig(queuePaths(ctx.deps.root, q).formFile, `form.json of queue ${q}`);
      } catch (err) {
        ctx.log.warn({ queue: q, err: (err as Error).message }, 'bad form.json');
        throw RqError.of('RQ_ERR_CONFIG', `500 - Bad overrides file: ${(err as Error).message}`);
      }
      return ctx.page(req, reply, newMessageView(q, form, ctx.urls), { queue: q, scripts: ['new-message.js'] });
    },

    async newQueue(req: FastifyRequest, reply: FastifyReply) {
      if (ctx.deps.config.allow_new_queue !== true) return ctx.text(reply, 403, NEW_QUEUE_FORBIDDEN);
      return ctx.page(req, reply, newQueueView(ctx.urls));
    },
  };
}
