// Read-only status routes: queue lists, per-queue .txt/.json, done.json, configs, health and dashboard data.
import fs from 'node:fs/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RqError } from '../../errors.js';
import { queuePaths } from '../../config/paths.js';
import { dashboardData, mgrState } from '../dashboard-data.js';
import { snapshotQueue, statusJson, statusText } from '../queue-snapshot.js';
import { pathParam } from '../request-params.js';
import { sendFile } from '../send-file.js';
import type { WebContext } from '../web-context.js';

/** rq-mgr must answer before queue pages are served (classic: 503 `QueueMgr not running`). */
export async function requireMgr(ctx: WebContext): Promise<void> {
  try {
    const r = await ctx.deps.mgr.call('ping');
    if (Array.isArray(r) && r[0] === 'pong') return;
  } catch {
    // answered below
  }
  throw new RqError('RQ_ERR_MGR_DOWN', '503 - QueueMgr not running');
}

async function queueNames(ctx: WebContext): Promise<string[]> {
  let reply: unknown;
  try {
    reply = await ctx.deps.mgr.call('queues');
  } catch {
    throw new RqError('RQ_ERR_MGR_DOWN', '503 - QueueMgr not running');
  }
  return Array.isArray(reply) ? reply.filter((n): n is string => typeof n === 'string') : [];
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
      return format === 'txt' ? reply.type('text/plain; charset=utf-8').send(statusText(snap)) : reply.type('application/json; charset=utf-8').send(statusJson(snap));
    },

    /** GET /q/<q>/done.json?limit=N (default 10) */
    async doneJson(req: FastifyRequest, reply: FastifyReply) {
      ctx.markJson(req);
      await requireMgr(ctx);
      const q = await ctx.requireQueue(pathParam(req, 'q'));
      const raw = (req.query as Record<string, unknown>).limit;
      const limit = raw === undefined || raw === '' ? 10 : Number(raw);
      if (!Number.isInteger(limit) || limit < 0) throw new RqError('RQ_ERR_INVALID_FIELD', `limit: expected a whole number >= 0, received ${JSON.stringify(raw)}`);
      const r = await ctx.ask(q, 'messages', { state: 'done', limit });
      if (Array.isArray(r) && r[0] === 'fail') return ctx.json(reply, r, r[1] === 'status: DOWN' ? 503 : 500);
      return ctx.json(reply, r);
    },

    /** GET /q/<q>/config (R): the live config the queue process uses. */
    async liveConfig(req: FastifyRequest, reply: FastifyReply) {
      ctx.markJson(req);
      const q = await ctx.requireRoutedQueue(pathParam(req, 'q'));
      const r = await ctx.ask(q, 'config');
      if (!Array.isArray(r) || r[0] !== 'ok') return ctx.json(reply, r, 500);
      return ctx.json(reply, r[1]);
    },

    /** GET /q/<q>/config.json: the file itself. */
    async configFile(req: FastifyRequest, reply: FastifyReply) {
      const q = await ctx.requireQueue(pathParam(req, 'q'));
      // config.json may be a symlink (create_queue_link), so resolve it rather than refuse it.
      const real = await fs.realpath(queuePaths(ctx.deps.root, q).configFile).catch(() => {
        throw new RqError('RQ_ERR_NOT_FOUND', `config.json of ${q} not found`);
      });
      return sendFile(req, reply, real, `config.json of ${q}`);
    },

    /** GET /healthz: 200 when rq-mgr and every queue answer ping, else 503 naming what does not. */
    async healthz(req: FastifyRequest, reply: FastifyReply) {
      ctx.markJson(req);
      const { mgr, names, workers } = await mgrState(ctx);
      const failing: { name: string; error: string }[] = [];
      if (!mgr.up) failing.push({ name: 'rq-mgr', error: mgr.error ?? 'no reply' });
      const checked = await Promise.all(
        names.map(async (n) => {
          try {
            const r = await ctx.ask(n, 'ping');
            if (!Array.isArray(r) || r[0] !== 'pong') failing.push({ name: `queue ${n}`, error: `ping answered ${JSON.stringify(r)}` });
          } catch (err) {
            const w = workers[n];
            failing.push({ name: `queue ${n}`, error: `${(err as Error).message}${w ? ` (worker ${w.status}${w.last_exit ? `, last ${w.last_exit}` : ''})` : ''}` });
          }
          return `queue ${n}`;
        }),
      );
      if (failing.length) return ctx.json(reply, { status: 'fail', failing }, 503);
      return ctx.json(reply, { status: 'ok', checked: ['rq-mgr', ...checked] });
    },

    /** GET /dashboard.json: what the dashboard's live refresh redraws. */
    async dashboardJson(req: FastifyRequest, reply: FastifyReply) {
      ctx.markJson(req);
      reply.header('Cache-Control', 'no-store');
      return ctx.json(reply, await dashboardData(ctx));
    },
  };
}
