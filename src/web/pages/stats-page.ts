// GET /q/<q>/stats (a day's statistics with charts) and GET /q/<q>/failed (failure groups, or one group's messages): read-only pages, served while the queue is DOWN.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RqError } from '../../errors.js';
import type { Answer } from '../../ipc/answer.js';
import { dayOf } from '../../queue/observers/day-stats.js';
import { CHART_CSS } from '../chart-lib.js';
import type { Params } from '../params.js';
import { pathParam } from '../request-params.js';
import { storedDays } from '../stats-days.js';
import { failedParams, statsDateParam } from '../stats-params.js';
import { withQuantiles } from '../stats-series.js';
import { groupView, groupsCard } from '../views/failed-view.js';
import { html } from '../views/html.js';
import { statsView } from '../views/stats-view.js';
import type { WebContext } from '../web-context.js';

/** A call to a queue that may not answer at all (its process gone): that is a refusal shown on the page, with 503. */
async function asked<T>(call: () => Promise<Answer<T>>): Promise<Answer<T>> {
  try {
    return await call();
  } catch (err) {
    if (!(err instanceof RqError) || err.code !== 'RQ_ERR_NO_REPLY') throw err;
    return { ok: false, code: 'RQ_ERR_NO_REPLY', text: err.message, raw: null };
  }
}

export function statsPages(ctx: WebContext) {
  const status = (a: Answer<unknown>) => (a.ok ? 200 : a.code === 'RQ_ERR_NO_REPLY' ? 503 : ctx.refusalStatus(a));

  return {
    /** GET /q/<q>/stats?date=YYYYMMDD (or YYYY-MM-DD from the date picker); today without. */
    async stats(req: FastifyRequest, reply: FastifyReply) {
      const q = await ctx.requireQueue(pathParam(req, 'q'));
      const date = statsDateParam(req.query as Params, true);
      const client = ctx.queue(q);
      const [day, failed, days] = await Promise.all([asked(() => client.stats(date)), asked(() => client.failed({})), storedDays(ctx.deps.root, q)]);
      const now = ctx.now();
      const today = dayOf(now);
      const groups = failed.ok && 'groups' in failed.value ? failed.value.groups : null;
      const data = {
        queue: q,
        date: day.ok ? day.value.date : (date ?? today),
        today,
        day: day.ok ? withQuantiles(day.value) : null,
        error: day.ok ? undefined : day.text,
        groups,
        days,
        now,
      };
      return ctx.page(req, reply, statsView(data, ctx.urls), {
        queue: q,
        status: status(day),
        scripts: ['main.js', 'stats-charts.js'],
        styles: [CHART_CSS, 'stats.css'],
      });
    },

    /** GET /q/<q>/failed[?group=G&offset=&limit=]: the groups, or a page of one group's err messages. */
    async failed(req: FastifyRequest, reply: FastifyReply) {
      const q = await ctx.requireQueue(pathParam(req, 'q'));
      const query = failedParams(req.query as Params);
      const r = await asked(() => ctx.queue(q).failed(query.group === undefined ? {} : query));
      const opts = { queue: q, status: status(r), scripts: ['main.js'], styles: ['stats.css'] };
      if (r.ok && 'messages' in r.value) return ctx.page(req, reply, groupView(q, r.value, query, ctx.urls), opts);
      const groups = r.ok && 'groups' in r.value ? r.value.groups : null;
      const head = html`<div class="page-head"><h1 id="failed-title">Failure groups of <a href="${ctx.urls.queue(q)}">${q}</a></h1><a href="${ctx.urls.queue(q, '/stats')}" id="failed-stats-link">statistics</a></div>`;
      return ctx.page(req, reply, html`${head}${groupsCard(q, groups, ctx.urls, ctx.urls.queue(q, '/failed'))}`, opts);
    },
  };
}
