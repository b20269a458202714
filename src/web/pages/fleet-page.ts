// GET /fleet: the fleet page, every host of the fleet with its queues (views/fleet-view.ts), kept fresh by public/js/fleet.js; a readable 404 on a host without a fleet.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { fleetAnswer } from '../fleet-answer.js';
import { fleetView } from '../views/fleet-view.js';
import { html } from '../views/html.js';
import type { WebContext } from '../web-context.js';

export function fleetPage(ctx: WebContext) {
  return async function fleet(req: FastifyRequest, reply: FastifyReply) {
    reply.header('Cache-Control', 'no-store');
    const a = await fleetAnswer(ctx);
    if (a.ok) return ctx.page(req, reply, fleetView(a.value, new Date(ctx.now())), { scripts: ['fleet.js'] });
    if (a.code === 'RQ_ERR_NO_FLEET') return ctx.notFoundPage(req, reply, a.text);
    return ctx.page(req, reply, html`<h2>Fleet</h2><p class="bad" id="fleet-error">${a.text}</p>`, { status: ctx.refusalStatus(a) });
  };
}
