// GET /: the dashboard (its counts refresh from /dashboard.json in the browser).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { dashboardData } from '../dashboard-data.js';
import { dashboardView } from '../views/dashboard-view.js';
import type { WebContext } from '../web-context.js';

export function dashboardPage(ctx: WebContext) {
  return async function dashboard(req: FastifyRequest, reply: FastifyReply) {
    const data = await dashboardData(ctx);
    return ctx.page(req, reply, dashboardView(data, ctx.urls, ctx.deps.config.allow_new_queue === true), { scripts: ['main.js'] });
  };
}
