// Read-only status routes: queue lists, per-queue .txt/.json, done.json, configs, health and dashboard data.
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RqError } from '../../errors.js';
import { orderQueues } from '../../message/queue-order.js';
import { dashboardData } from '../dashboard-data.js';
import { healthReport } from '../health.js';
import { snapshotQueue, statusJson, statusText } from '../queue-snapshot.js';
import { pathParam } from '../request-params.js';
import { sendFile } from '../send-file.js';
import { hasSecrets, readQueueConfig, withoutSecrets } from '../queue-config-file.js';
import type { WebContext } from '../web-context.js';

/** rq-mgr must answer before queue pages are served (classic: 503 `QueueMgr not running`). */
export async function requireMgr(ctx: WebContext): Promise<void> {
  try {
    if (await ctx.deps.mgr.ping()) return;
  } catch {
    // answered below
  }
  throw RqError.of('RQ_ERR_MGR_DOWN');
}

async function queueNames(ctx: WebContext): Promise<string[]> {
  try {
    // rq-mgr answers in the order it started them (spec §6.2); every listing shows one order.
    return orderQueues(await ctx.deps.mgr.queues());
  } catch {
    throw RqError.of('RQ_ERR_MGR_DOWN');
  }
}

export function statusApi(ctx: WebContext) {
  return {
    /** GET /q.txt */
    async listTxt(_req: FastifyRequest, reply: FastifyReply) {
      const names = await queueNames(ctx);
      return reply.type('text/plain; charset=utf-8').send(names.map((n) => `q/${n}.txt\n`).join('') + '\n');
    },

    /** GET /q.json */
    async listJson(req: FastifyRequest, reply: FastifyReply) {
      ctx.markJson(req);
      return ctx.json(reply, await queueNames(ctx));
    },

    /** GET /q/<q>.txt and /q/<q>.json; a queue that does not answer is shown DOWN with 503. */
    async queueStatus(req: FastifyRequest, reply: FastifyReply, name: string, format: 'txt' | 'json') {
      if (format === 'json') ctx.markJson(req);
      const q = await ctx.requireQueue(name);
      const snap = await snapshotQueue(ctx, q);
      if (!snap.alive) reply.code(503).header('X-RQ-Error', snap.error?.replace(/[^\x20-\x7e]/g, '?').slice(0, 200) ?? 'no reply');
      return format === 'txt'
        ? reply.type('text/plain; charset=utf-8').send(statusText(snap))
        : reply.type('application/json; charset=utf-8').send(statusJson(snap));
    },

    /** GET /q/<q>/done.json?limit=N (default 10) */
    async doneJson(req: FastifyRequest, reply: FastifyReply) {
      ctx.markJson(req);
      await requireMgr(ctx);
      const q = await ctx.requireQueue(pathParam(req, 'q'));
      const raw = (req.query as Record<string, unknown>).limit;
      const limit = raw === undefined || raw === '' ? 10 : Number(raw);
      if (!Number.isInteger(limit) || limit < 0) throw RqError.of('RQ_ERR_INVALID_FIELD', 'limit', 'a whole number >= 0', JSON.stringify(raw));
      const r = await ctx.queue(q).list('done', { limit });
      if (!r.ok) return ctx.answerJson(reply, r);
      return ctx.json(reply, r.value);
    },

    /** GET /q/<q>/config (R): the live config the queue process uses. */
    async liveConfig(req: FastifyRequest, reply: FastifyReply) {
      ctx.markJson(req);
      const q = await ctx.requireRoutedQueue(pathParam(req, 'q'));
      const r = await ctx.queue(q).config();
      if (!r.ok) return ctx.answerJson(reply, r);
      return ctx.json(reply, withoutSecrets(r.value));
    },

    /** GET /q/<q>/config.json: the file itself. */
    async configFile(req: FastifyRequest, reply: FastifyReply) {
      const q = await ctx.requireQueue(pathParam(req, 'q'));
      const shownAs = `config.json of ${q}`;
      // Only a regular file of a config's size that holds a JSON object is served: a link to /dev/zero or a huge file
      // would hold the web's memory, and a link to anything else (made before links were checked) is not a config.
      const read = await readQueueConfig(ctx.deps.root, q);
      if (!read) throw RqError.of('RQ_ERR_FILE_NOT_FOUND', shownAs, ' (not a JSON object of at most 1 MiB)');
      // A config that names a secret (a copy of config/config.json, say) or sets env_vars is served without their values.
      if (hasSecrets(read.config)) return ctx.json(reply, withoutSecrets(read.config));
      return sendFile(req, reply, path.dirname(read.real), [path.basename(read.real)], shownAs);
    },

    /** GET /healthz: each queue's state; 200 while rq-mgr answers and every queue's state is healthy, else 503 naming what is not. */
    async healthz(req: FastifyRequest, reply: FastifyReply) {
      ctx.markJson(req);
      const report = await healthReport(ctx);
      return ctx.json(reply, report, report.status === 'ok' ? 200 : 503);
    },

    /** GET /dashboard.json: what the dashboard's live refresh redraws. */
    async dashboardJson(req: FastifyRequest, reply: FastifyReply) {
      ctx.markJson(req);
      reply.header('Cache-Control', 'no-store');
      return ctx.json(reply, await dashboardData(ctx));
    },
  };
}
