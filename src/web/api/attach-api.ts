// Attachments and job logs: upload (attach/new), delete, and Range-capable downloads of both.
import fsp from 'node:fs/promises';
import type {} from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RqError } from '../../errors.js';
import { type Answer, refused } from '../../ipc/answer.js';
import { attachmentNameProblem } from '../../message/names.js';
import { getMessage, messageDir, requireFileName } from '../message-files.js';
import { textParam } from '../params.js';
import { pathParam } from '../request-params.js';
import { rubyInspect } from '../ruby-inspect.js';
import { sendFile } from '../send-file.js';
import { receiveUpload } from '../upload.js';
import { html } from '../views/html.js';
import { type WebContext, notice } from '../web-context.js';
import { INVALID_METHOD } from './message-api.js';

export function attachApi(ctx: WebContext, maxUploadBytes: number) {
  /** Sends a file of the message, asking the queue again if the message moved (run ⇒ done) meanwhile. */
  async function sendMessageFile(req: FastifyRequest, reply: FastifyReply, sub: 'job' | 'attach', fileParam: string, what: string) {
    const q = await ctx.requireRoutedQueue(pathParam(req, 'q'));
    const id = ctx.requireMsgId(pathParam(req, 'id'));
    const name = requireFileName(pathParam(req, fileParam), what);
    for (let attempt = 0; ; attempt++) {
      const dir = messageDir(ctx, await getMessage(ctx, q, id));
      try {
        return await sendFile(req, reply, dir, [sub, name], `${what} ${name}`);
      } catch (err) {
        if (attempt > 0 || !(err instanceof RqError) || err.code !== 'RQ_ERR_FILE_NOT_FOUND') throw err;
      }
    }
  }

  /** The queue's answer to an attach, in the client's format: JSON with its status, or the classic flash and redirect, or text. */
  function answerAttach(req: FastifyRequest, reply: FastifyReply, url: string, id: string, format: string, r: Answer<string>) {
    if (format === 'json') return ctx.answerJson(reply, r);
    if (r.ok) return ctx.redirectTo(req, reply, ctx.urls.msg(url, id), notice(html`Attached message successfully`));
    return ctx.text(reply, ctx.refusalStatus(r), `Commit ${url}/${id} got ${rubyInspect(r.raw)}`);
  }

  return {
    /** POST /q/<q>/<id>/attach/new (R): multipart `filedata`, x_format html (default) or json */

    async attachNew(req: FastifyRequest, reply: FastifyReply) {
      const url = pathParam(req, 'q');
      const q = await ctx.requireRoutedQueue(url);
      const id = ctx.requireMsgId(pathParam(req, 'id'));
      if (!req.isMultipart()) throw RqError.of('RQ_ERR_UPLOAD_MISSING', 'a multipart/form-data upload with a file field named "filedata"');
      const queryFormat = textParam(req.query as Record<string, string>, 'x_format');
      if (queryFormat === 'json') ctx.markJson(req);
      // The message must be there, in prep, before a byte of its file is stored: an upload to an
      // unknown id is refused as the queue would refuse it, not written to disk in full first.
      let early: Answer<string> | null = null;
      const inPrep = async () => {
        const s = await ctx.queue(q).state(id);
        if (s.ok && s.value === 'prep') return;
        early = !s.ok && s.code !== 'RQ_ERR_NO_SUCH_MSG' ? s : refused(RqError.of('RQ_ERR_CANNOT_FIND_MESSAGE'));
        throw RqError.of('RQ_ERR_CANNOT_FIND_MESSAGE');
      };
      let upload: Awaited<ReturnType<typeof receiveUpload>>;
      try {
        upload = await receiveUpload(
          req,
          ctx.deps.uploadDir,
          'filedata',
          maxUploadBytes,
          (name, value) => {
            if (name === 'x_format' && value === 'json') ctx.markJson(req);
          },
          1,
          inPrep,
        );
      } catch (err) {
        if (!early) throw err;
        // The rest of the body is not stored: it is read and dropped after the answer, within bounds (bounded-drain.ts).
        return answerAttach(req, reply, url, id, ctx.wantsJson(req) ? 'json' : 'html', early);
      }
      const { file, params } = upload;
      const format = textParam(params, 'x_format') ?? queryFormat ?? 'html';
      if (format === 'json') ctx.markJson(req);
      if (!file) throw RqError.of('RQ_ERR_UPLOAD_MISSING', 'a file upload with a file name, received none');
      let r: Answer<string>;

      try {
        // Checked here too so a refused name costs no queue round trip; the queue checks again.
        const problem = attachmentNameProblem(file.filename);
        r = problem ? refused(RqError.of('RQ_ERR_ATTACH_REFUSED', problem)) : await ctx.queue(q).attach(id, file.tmpPath, file.filename);
      } finally {
        // The queue hard-linked it (or refused): the temp name is no longer needed either way.
        await fsp.rm(file.tmpPath, { force: true });
      }
      return answerAttach(req, reply, url, id, format, r);
    },

    /** POST /q/<q>/<id>/attach/<name> (R) with _method=delete */
    async attachDelete(req: FastifyRequest, reply: FastifyReply) {
      const url = pathParam(req, 'q');
      const q = await ctx.requireRoutedQueue(url);
      const id = ctx.requireMsgId(pathParam(req, 'id'));
      const name = requireFileName(pathParam(req, 'name'), 'Attachment');
      const params = await ctx.params(req);
      const format = textParam(params, 'x_format') ?? 'html';
      if (format === 'json') ctx.markJson(req);
      if (textParam(params, '_method') !== 'delete') return ctx.text(reply, 400, INVALID_METHOD);
      const r = await ctx.queue(q).deleteAttachment(id, name);
      if (format === 'json') return ctx.answerJson(reply, r);
      if (r.ok) return ctx.redirectTo(req, reply, ctx.urls.msg(url, id), notice(html`Attachment deleted successfully`));
      return ctx.text(reply, ctx.refusalStatus(r), `Delete of attach ${name} on ${url}/${id} got ${rubyInspect(r.raw)}`);
    },

    /** GET /q/<q>/<id>/attach/<name> (R) */
    attachGet: (req: FastifyRequest, reply: FastifyReply) => sendMessageFile(req, reply, 'attach', 'name', 'Attachment'),

    /** GET /q/<q>/<id>/log/<file> (R) */
    logGet: (req: FastifyRequest, reply: FastifyReply) => sendMessageFile(req, reply, 'job', 'file', 'Log file'),
  };
}
